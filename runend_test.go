package rath_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

// errBroken is the model error that fails a "two-agents" run given the
// input "fail".
var errBroken = errors.New("the model is broken")

// two-agents runs a first agent (a tool call, then an answer) and a
// second one on a fork of its output (an answer, or, on the input "fail",
// a model error that fails the run): its agents leave sessions of their
// own, and a fork.
func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "two-agents", TakesInput: true, Description: "two agents, the second on a fork",
		Build: func(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
			text, _ := rath.InputText(ctx)
			ping, err := tool.FuncWith("ping", "Ping.", func(context.Context, tool.Env, struct{}) (string, error) { return "pong", nil })
			if err != nil {
				return nil, nil, err
			}
			first, err := agent.New(agent.Config{Name: "first", Instructions: "Ping, then answer.", Tools: []tool.Tool{ping}, MaxSteps: 3,
				Model: scripted.New(model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("p1", "ping", `{}`)}}, model.Response{Text: "pinged"})})
			if err != nil {
				return nil, nil, err
			}
			second := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
				if text == "fail" {
					return model.Response{}, errBroken
				}
				return model.Response{Text: "done"}, nil
			})
			b, err := agent.New(agent.Config{Name: "second", Instructions: "Answer.", Model: second, MaxSteps: 2})
			if err != nil {
				return nil, nil, err
			}
			fork := flow.Named("fork", flow.Func(func(_ context.Context, s *session.Session) (*session.Session, error) { return s.Fork(), nil }))
			return flow.Sequential(first, fork, b), session.FromUser("go"), err
		}})
}

// A run that ends leaves none of its sessions open, active or paused:
// closed with a closed run, failed with a failed one; the model calls it
// made are recorded on it.
func TestFinishedRunEndsItsSessions(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { finishedRunEndsItsSessions(t, "") })
	t.Run("postgres", func(t *testing.T) { finishedRunEndsItsSessions(t, pgtest.FreshDB(t, "rath_runend")) })
}

func finishedRunEndsItsSessions(t *testing.T, storeURL string) {
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: t.TempDir(), Store: storeURL})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for _, c := range []struct {
		input string
		want  store.Status
		steps string
	}{{"ok", store.StatusClosed, "3"}, {"fail", store.StatusFailed, ""}} {
		var run session.ID
		_, err := rt.Run(ctx, "two-agents", rath.RunInput(c.input), rath.OnStart(func(id session.ID) { run = id }))
		if c.want == store.StatusFailed && !errors.Is(err, errBroken) || c.want == store.StatusClosed && err != nil {
			t.Fatalf("%s: run: %v", c.input, err)
		}
		infos, err := rt.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(run)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) < 3 {
			t.Fatalf("%s: %d sessions labelled with the run, want its agents', the fork and the output", c.input, len(infos))
		}
		for _, i := range infos {
			if i.Status != c.want {
				t.Errorf("%s: session %s (%s) is %s after the run ended %s", c.input, i.ID, i.Lineage.Op, i.Status, c.want)
			}
		}
		in, err := rt.Store.Info(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if in.Status != c.want {
			t.Fatalf("%s: the run is %s", c.input, in.Status)
		}
		if got := in.Labels[runctx.StepsLabel]; c.steps != "" && got != c.steps || got == "" {
			t.Fatalf("%s: steps %q, want %s", c.input, got, orAny(c.steps))
		}
	}
}

func orAny(s string) string {
	if s == "" {
		return "some"
	}
	return fmt.Sprintf("%q", s)
}
