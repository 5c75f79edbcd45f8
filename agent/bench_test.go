package agent

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

// stepAgent answers every request with one call of a no-op tool, for steps
// steps, then a final answer.
func stepAgent(b *testing.B, steps int, cfg Config) *Agent {
	b.Helper()
	n := 0
	cfg.Model = scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		n++
		if n%(steps+1) == 0 {
			return model.Response{Text: "done"}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c", "noop", `{}`)}}, nil
	})
	cfg.Tools = []tool.Tool{tool.MustFunc("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "ok", nil })}
	cfg.Name, cfg.MaxSteps = "bench", steps+1
	a, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// benchSteps runs 10-step runs and reports the median time per step.
func benchSteps(b *testing.B, a *Agent) []time.Duration {
	const steps = 10
	var per []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := a.Forward(context.Background(), session.FromUser("go")); err != nil {
			b.Fatal(err)
		}
		per = append(per, time.Since(t0)/(steps+1))
	}
	slices.Sort(per)
	b.ReportMetric(float64(per[len(per)/2].Nanoseconds())/1e3, "us/step")
	return per
}

// BenchmarkStepOverheadMemory: the loop on an unbound session.
func BenchmarkStepOverheadMemory(b *testing.B) {
	benchSteps(b, stepAgent(b, 10, Config{}))
}

// BenchmarkStepOverhead: the same loop committing every step to SQLite in
// sync mode.
func BenchmarkStepOverhead(b *testing.B) {
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(b.TempDir(), "b.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchSteps(b, stepAgent(b, 10, Config{Store: st}))
}
