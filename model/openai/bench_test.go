package openai

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/openrath/rath/model"
)

// BenchmarkStreamOverhead streams 1,000 one-token text deltas from a local
// server, pre-rendered, through model.New and model.Generate: the cost this
// package and the SDK add per delta. The allocation count is the process's
// (the test server's few per request included).
func BenchmarkStreamOverhead(b *testing.B) {
	const deltas = 1000
	const token = "tok "
	var body bytes.Buffer
	fmt.Fprintf(&body, "data: %s\n\n", roleChunk())
	for range deltas {
		fmt.Fprintf(&body, "data: %s\n\n", text(token))
	}
	for _, e := range []string{finish("stop"), usageChunk(20, deltas, 0, 0), done} {
		fmt.Fprintf(&body, "data: %s\n\n", e)
	}
	raw := body.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(raw)
	}))
	defer srv.Close()
	p, err := New(model.ProviderConfig{APIKey: testKey, BaseURL: srv.URL + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	m := model.New(p, "gpt-test", model.Options{})
	req := userRequest("count")
	ctx := context.Background()

	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		resp, err := model.Generate(ctx, m, req)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Text) != deltas*len(token) {
			b.Fatalf("%d bytes of text, want %d", len(resp.Text), deltas*len(token))
		}
	}
	runtime.ReadMemStats(&after)
	n := float64(b.N) * deltas
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/delta")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/delta")
}
