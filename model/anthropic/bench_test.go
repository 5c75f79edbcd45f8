package anthropic

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/model"
)

// BenchmarkStreamOverhead measures the cost per streamed text delta of a
// whole call (HTTP, SSE decoding, assembling, model.New) against a local
// server streaming 1,000 one-token deltas.
func BenchmarkStreamOverhead(b *testing.B) {
	const deltas = 1000
	pieces := make([]string, deltas)
	for i := range pieces {
		pieces[i] = "tok "
	}
	srv := newServer(b, streamOK(textStream(pieces...)))
	p := newProvider(b, srv.URL)
	req := userRequest("hi")
	want := strings.Repeat("tok ", deltas)

	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for b.Loop() {
		m := model.New(p, "claude-test", model.Options{})
		resp, err := model.Generate(b.Context(), m, req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.Text != want {
			b.Fatalf("text of %d bytes, want %d", len(resp.Text), len(want))
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	n := float64(b.N) * deltas
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/delta")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/delta")
}
