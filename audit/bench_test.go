package audit_test

import (
	"runtime"
	"testing"

	"github.com/openrath/rath/audit"
)

// BenchmarkAuditAppend: 64 goroutines appending at once, as an API server
// under load records its grant decisions; records/s is the figure.
func BenchmarkAuditAppend(b *testing.B) {
	for name, mk := range map[string]func(testing.TB) backend{"sqlite": sqliteBackend, "postgres": postgresBackend} {
		b.Run(name, func(b *testing.B) {
			st := mk(b).open(b)
			l := openLog(b, st, audit.Options{})
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			r := record(1)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := l.Append(b.Context(), r); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
