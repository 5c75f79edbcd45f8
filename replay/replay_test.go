package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

var ctx = context.Background()

type addArgs struct {
	A, B int
}

// adder is a tool; calls counts its executions.
func adder(calls *atomic.Int64, offset int) tool.Tool {
	return tool.MustFunc("add", "Add two numbers.", func(_ context.Context, in addArgs) (string, error) {
		calls.Add(1)
		return fmt.Sprint(in.A + in.B + offset), nil
	})
}

// script answers a math agent: a tool call, then a final answer quoting
// the tool's result.
func mathModel() model.Model {
	return scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == session.RoleTool {
			return model.Response{Text: "the sum is " + last.Content, Usage: session.Usage{InputTokens: 10, OutputTokens: 3}}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall(fmt.Sprintf("c%d", len(req.Messages)), "add", `{"A":2,"B":3}`)},
			Usage: session.Usage{InputTokens: 8, OutputTokens: 5}}, nil
	})
}

// dead fails the test if called: a replay must not reach the model.
func dead(t *testing.T) model.Model {
	return scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
		t.Error("a replay called the model")
		return model.Response{}, errors.New("called")
	})
}

func mathAgent(t *testing.T, name, instructions string, m model.Model, calls *atomic.Int64, offset int) *agent.Agent {
	a, err := agent.New(agent.Config{Name: name, Instructions: instructions, Model: m, Tools: []tool.Tool{adder(calls, offset)}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// workflow: a selector choosing by model, then the chosen agent, then a
// validator; the agents run in parallel in the "both" route.
func workflow(t *testing.T, chooser model.Model, agentModel func() model.Model, calls *atomic.Int64, offset int, instructions string) flow.Module {
	check := flow.Validate("has-sum", func(_ context.Context, s *session.Session) (bool, string, error) {
		msgs := s.Transcript()
		return strings.Contains(msgs[len(msgs)-1].Content, "sum"), "the answer states a sum", nil
	})
	return flow.Sequential(
		flow.ModelSelector("triage", chooser,
			flow.Route{Name: "math", Description: "arithmetic", Module: mathAgent(t, "solver", instructions, agentModel(), calls, offset)},
			flow.Route{Name: "both", Description: "two opinions", Module: flow.Parallel(
				mathAgent(t, "left", instructions, agentModel(), calls, offset),
				mathAgent(t, "right", instructions, agentModel(), calls, offset))},
		),
		check,
	)
}

func choose(route string) model.Model {
	return scripted.New(model.Response{Text: fmt.Sprintf(`{"route":%q,"reason":"it is arithmetic"}`, route)})
}

func record(t *testing.T, route string) (*session.Session, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	out, err := flow.Run(ctx, nil, workflow(t, choose(route), mathModel, &calls, 0, "You add."), session.FromUser("what is 2+3?"))
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}
	return out, &calls
}

func TestReplayRepeatsTheRecord(t *testing.T) {
	for _, route := range []string{"math", "both"} {
		t.Run(route, func(t *testing.T) {
			rec, calls := record(t, route)
			before := calls.Load()
			var replayCalls atomic.Int64
			out, err := replay.Run(ctx, workflow(t, dead(t), func() model.Model { return dead(t) }, &replayCalls, 0, "You add."), rec)
			if err != nil {
				t.Fatal(err)
			}
			if out.Head() != rec.Head() || out.Len() != rec.Len() {
				t.Fatalf("replay head %s (%d chunks), record %s (%d)", out.Head(), out.Len(), rec.Head(), rec.Len())
			}
			if replayCalls.Load() != 0 || calls.Load() != before {
				t.Fatalf("tools ran during the replay: %d", replayCalls.Load())
			}
			var decisions int
			for _, c := range out.All() {
				if c.Decision != nil {
					decisions++
					if c.Decision.Choice != route || c.Decision.ModelCall == "" || c.Decision.Reason == "" {
						t.Fatalf("decision = %+v", c.Decision)
					}
				}
			}
			if decisions != 1 {
				t.Fatalf("%d decisions", decisions)
			}
		})
	}
}

func TestReplayReportsDivergence(t *testing.T) {
	rec, _ := record(t, "both")
	// The tool now answers differently: the first tool result diverges.
	var calls atomic.Int64
	_, err := replay.Run(ctx, workflow(t, dead(t), func() model.Model { return dead(t) }, &calls, 0, "You add."), rec, replay.RerunTools())
	if err != nil {
		t.Fatalf("the same code re-running its tools diverged: %v", err)
	}
	_, err = replay.Run(ctx, workflow(t, dead(t), func() model.Model { return dead(t) }, &calls, 1, "You add."), rec, replay.RerunTools())
	var d *replay.Divergence
	if !errors.As(err, &d) || !errors.Is(err, replay.ErrDiverged) {
		t.Fatalf("changed tool: %v", err)
	}
	if rec.Chunk(d.Index).ToolResult == nil || !strings.Contains(d.Node, "agent:left#1") || !strings.Contains(d.Diff, `"content": "5"`) || !strings.Contains(d.Diff, `"content": "6"`) {
		t.Fatalf("divergence = %+v", d)
	}
	// Changed instructions: the agent's system chunk differs.
	_, err = replay.Run(ctx, workflow(t, dead(t), func() model.Model { return dead(t) }, &calls, 0, "You multiply."), rec)
	if !errors.As(err, &d) || rec.Chunk(d.Index).System == nil || !strings.Contains(d.Diff, "You multiply.") {
		t.Fatalf("changed instructions: %v", err)
	}
	// A changed tool list changes the request: a model-call divergence
	// with the difference shown.
	other := tool.MustFunc("sub", "Subtract.", func(_ context.Context, in addArgs) (string, error) { return "", nil })
	a, _ := agent.New(agent.Config{Name: "solver", Instructions: "You add.", Model: dead(t), Tools: []tool.Tool{adder(&calls, 0), other}})
	rec2, _ := record(t, "math")
	m := flow.Sequential(flow.ModelSelector("triage", dead(t), flow.Route{Name: "math", Description: "arithmetic", Module: a},
		flow.Route{Name: "both", Description: "two opinions"}))
	_, err = replay.Run(ctx, m, rec2)
	if !errors.As(err, &d) || rec2.Chunk(d.Index).ModelCall == nil || !strings.Contains(d.What, "request differs") || !strings.Contains(d.Diff, "sub") {
		t.Fatalf("changed tools: %v", err)
	}
	// Code that stops early leaves recorded chunks unplayed.
	short := flow.Sequential(flow.ModelSelector("triage", dead(t), flow.Route{Name: "math", Description: "arithmetic", Module: mathAgent(t, "solver", "You add.", dead(t), &calls, 0)},
		flow.Route{Name: "both", Description: "two opinions"}))
	_, err = replay.Run(ctx, short, rec2)
	if !errors.As(err, &d) || !strings.Contains(d.What, "ended without") {
		t.Fatalf("a shorter workflow: %v", err)
	}
}

func TestForkAtStep(t *testing.T) {
	rec, _ := record(t, "math")
	// Fork just after the tool result: the final answer comes live from a
	// different model.
	at := -1
	for i, c := range rec.All() {
		if c.ToolResult != nil {
			at = i + 1
		}
	}
	var calls atomic.Int64
	live := scripted.New(model.Response{Text: "the sum, says the new model, is 5"})
	m := workflow(t, dead(t), func() model.Model { return live }, &calls, 0, "You add.")
	out, err := replay.Fork(ctx, m, rec, at)
	if err != nil {
		t.Fatal(err)
	}
	if out.Chunk(at-1).ID != rec.Chunk(at-1).ID {
		t.Fatal("the fork does not share the record's prefix")
	}
	if out.Chunk(at).ID == rec.Chunk(at).ID {
		t.Fatal("the fork did not branch")
	}
	msgs := out.Transcript()
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "new model") {
		t.Fatalf("the live part: %q", got)
	}
}

// TestReplayMap: items a Map appends are recorded under its node, so the
// replay neither mistakes them for input nor repeats them.
func TestReplayMap(t *testing.T) {
	var calls atomic.Int64
	mk := func(m func() model.Model) flow.Module {
		items := func(*session.Session) ([]string, error) { return []string{"2+3", "4+5", "6+7"}, nil }
		return flow.Map(items, mathAgent(t, "solver", "You add.", m(), &calls, 0), 2)
	}
	rec, err := flow.Run(ctx, nil, mk(mathModel), session.FromUser("sums"))
	if err != nil {
		t.Fatal(err)
	}
	if replay.InputOf(rec) != 1 {
		t.Fatalf("input of the record: %d chunks", replay.InputOf(rec))
	}
	out, err := replay.Run(ctx, mk(func() model.Model { return dead(t) }), rec)
	if err != nil || out.Head() != rec.Head() {
		t.Fatalf("replay of a map: %v", err)
	}
}
