package replay_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// stepper calls add until the view holds nine results, then answers:
// ten model calls (steps) per run.
func stepper() model.Model {
	return scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == session.RoleTool {
				n++
			}
		}
		if n >= 9 {
			return model.Response{Text: "done"}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall(fmt.Sprint("c", n), "add", `{"A":1,"B":2}`)}}, nil
	})
}

// BenchmarkReplay: a recorded workflow of agent steps — a Map of runs of
// an agent taking ten steps each (nine tool calls and an answer): 100, 1,000
// and 10,000 runs, so 1,000 to 100,000 steps — replayed from its record;
// reports replayed steps per second, which should not fall as the record
// grows. RATH_REPLAY_RUNS replaces the largest size.
func BenchmarkReplay(b *testing.B) {
	for _, runs := range []int{100, 1000, benchRuns()} {
		b.Run(fmt.Sprintf("steps=%d", runs*10), func(b *testing.B) { benchReplay(b, runs) })
	}
}

func benchReplay(b *testing.B, runs int) {
	steps := 10
	var calls atomic.Int64
	mk := func(m model.Model) flow.Module {
		a, err := agent.New(agent.Config{Name: "adder", Instructions: "Add.", Model: m, Tools: []tool.Tool{adder(&calls, 0)}, MaxSteps: 20})
		if err != nil {
			b.Fatal(err)
		}
		items := make([]string, runs)
		for i := range items {
			items[i] = fmt.Sprint("task ", i)
		}
		return flow.Map(func(*session.Session) ([]string, error) { return items, nil }, a, 0)
	}
	rec, err := flow.Run(context.Background(), nil, mk(stepper()), session.FromUser("sum things"))
	if err != nil {
		b.Fatal(err)
	}
	dead := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		return model.Response{}, fmt.Errorf("the replay called the model")
	})
	m := mk(dead)
	var total time.Duration
	for b.Loop() {
		t0 := time.Now()
		out, err := replay.Run(context.Background(), m, rec)
		total += time.Since(t0)
		if err != nil || out.Head() != rec.Head() {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(runs*steps)*float64(b.N)/total.Seconds(), "steps/s")
}

// benchRuns is the number of runs BenchmarkReplay records
// (RATH_REPLAY_RUNS, default 10,000).
func benchRuns() int {
	if n, err := strconv.Atoi(os.Getenv("RATH_REPLAY_RUNS")); err == nil && n > 0 {
		return n
	}
	return 10_000
}
