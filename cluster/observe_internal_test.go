package cluster

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/sqlite"
)

// What a run commits through an observed store is counted once each: its
// model calls (latency, tokens, cost by model; a usage total is no call),
// its steps, its tool results and their errors by kind; a commit the store
// refuses counts nothing.
func TestStepMetrics(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "rath.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := NewStepMetrics()
	o := m.Observe(st)
	call := func(model string, in, out int64, cost float64) session.Chunk {
		return session.Of(&session.ModelCall{Provider: "scripted", Model: model, Latency: 30 * time.Millisecond,
			Usage: session.Usage{InputTokens: in, OutputTokens: out, CostUSD: cost}})
	}
	s := session.FromUser("go").Append(call("m1", 100, 20, 0.5))
	if err := o.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	prev := s.Head()
	s = s.Append(
		session.Result(session.ToolResult{CallID: "c1", Tool: "shell", Content: "ok"}),
		session.Result(session.ToolResult{CallID: "c2", Tool: "shell", Error: &session.ToolError{Kind: session.ToolErrUnknownTool, Message: "no"}}),
		call("m1", 50, 10, 0.25),
		session.Of(&session.ModelCall{Provider: "scripted", Model: "m1", Aggregate: true, Usage: session.Usage{InputTokens: 1000}}),
	)
	if err := o.Commit(ctx, s, prev); err != nil {
		t.Fatal(err)
	}
	// A stale commit is refused and counts nothing.
	if err := o.Commit(ctx, s.Append(call("m1", 7, 7, 7)), prev); err == nil {
		t.Fatal("a commit over a stale head was taken")
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"input tokens", value(t, m.tokens, "scripted", "m1", "input"), 150},
		{"output tokens", value(t, m.tokens, "scripted", "m1", "output"), 30},
		{"cost", value(t, m.cost, "scripted", "m1"), 0.75},
		{"tool results", value(t, m.tools), 2},
		{"tool errors", value(t, m.toolErrors, "shell", session.ToolErrUnknownTool), 1},
		{"model calls", value(t, m.calls, "scripted", "m1"), 2},
		{"steps", value(t, m.steps), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// value is the value of c's metric with the label values given (in any
// order): a counter's count, or a histogram's number
// of observations.
func value(t *testing.T, c prometheus.Collector, labels ...string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var got []string
			for _, lp := range m.GetLabel() {
				got = append(got, lp.GetValue())
			}
			want := slices.Clone(labels)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
