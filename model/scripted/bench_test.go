package scripted

import (
	"context"
	"strings"
	"testing"

	"github.com/openrath/rath/model"
)

// BenchmarkStreamOverhead streams a 1,000-token answer through the model
// wrapper and reports the cost per delta: what the runtime adds on top of a
// provider, with no network at all.
func BenchmarkStreamOverhead(b *testing.B) {
	const deltas = 1000
	text := strings.Repeat("tok ", deltas)
	m := Func(func(context.Context, *model.Request) (model.Response, error) { return model.Response{Text: text}, nil })
	req := &model.Request{}
	ctx := context.Background()
	b.ReportAllocs()
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := model.Generate(ctx, m, req); err != nil {
			b.Fatal(err)
		}
	})
	b.ResetTimer()
	for b.Loop() {
		r, err := model.Generate(ctx, m, req)
		if err != nil || len(r.Text) != len(text) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/deltas, "ns/delta")
	b.ReportMetric(allocs/deltas, "allocs/delta")
}
