package audit_test

import (
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/openrath/rath/audit"
)

var benchBackends = map[string]func(testing.TB) backend{"sqlite": sqliteBackend, "postgres": postgresBackend}

// BenchmarkAuditAppend: 64 goroutines appending at once, as an API server
// under load records its grant decisions; records/s is the figure.
func BenchmarkAuditAppend(b *testing.B) {
	for name, mk := range benchBackends {
		b.Run(name, func(b *testing.B) { benchAppend(b, mk, audit.Options{}) })
	}
}

// BenchmarkAuditAppendWitness: the same with a witness file, a line every
// 1,000 records (the default) or after every commit (every=1).
func BenchmarkAuditAppendWitness(b *testing.B) {
	for name, mk := range benchBackends {
		for _, every := range []int{audit.DefaultWitnessEvery, 1} {
			b.Run(name+"/every="+strconv.Itoa(every), func(b *testing.B) {
				benchAppend(b, mk, audit.Options{WitnessFile: filepath.Join(b.TempDir(), "audit.witness"), WitnessEvery: every})
			})
		}
	}
}

func benchAppend(b *testing.B, mk func(testing.TB) backend, o audit.Options) {
	st := mk(b).open(b)
	l := openLog(b, st, o)
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
}
