package rath_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "with-params", Description: "answers with its parameters",
		Params: []rath.Param{{Name: "who", Required: true}, {Name: "mood", Default: "calm"}, {Name: "note"}},
		Build: func(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
			args := rath.Args(ctx)
			text := args["who"] + " is " + args["mood"]
			if n, ok := args["note"]; ok {
				text += " (" + n + ")"
			}
			m := scripted.Func(func(context.Context, *model.Request) (model.Response, error) { return model.Response{Text: text}, nil })
			a, err := agent.New(agent.Config{Name: "echo", Instructions: "Say " + text + ".", Model: m, Store: rt.Store})
			return a, session.FromUser("go"), err
		}})
}

// TestRunArgs: a run's parameters reach Build with the defaults of those
// left out, are recorded on the run, and are checked against the
// workflow's declaration.
func TestRunArgs(t *testing.T) {
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	answer := func(out *session.Session) string {
		return out.Chunk(out.Len() - 1).Assistant.Text
	}

	var run session.ID
	out, err := rt.Run(ctx, "with-params", rath.RunArgs(map[string]string{"who": "Ada"}), rath.OnStart(func(id session.ID) { run = id }))
	if err != nil {
		t.Fatal(err)
	}
	if got := answer(out); got != "Ada is calm" {
		t.Errorf("with a default: %q", got)
	}
	info, err := rt.Store.Info(ctx, run)
	if err != nil || info.Labels[rath.RunArgsLabel] != `{"mood":"calm","who":"Ada"}` {
		t.Errorf("the run records %q (%v)", info.Labels[rath.RunArgsLabel], err)
	}
	if _, err := rt.Replay(ctx, out.ID()); err != nil {
		t.Errorf("replaying a run with parameters: %v", err)
	}

	out, err = rt.Run(ctx, "with-params", rath.RunArgs(map[string]string{"who": "Bo", "mood": "glad", "note": "today"}))
	if err != nil || answer(out) != "Bo is glad (today)" {
		t.Errorf("with every parameter: %v %q", err, answer(out))
	}

	if _, err := rt.Run(ctx, "with-params"); !errors.Is(err, rath.ErrMissingParam) {
		t.Errorf("without the required parameter: %v", err)
	}
	if _, err := rt.Run(ctx, "with-params", rath.RunArgs(map[string]string{"who": "Ada", "colour": "red"})); !errors.Is(err, rath.ErrUnknownParam) {
		t.Errorf("with an undeclared parameter: %v", err)
	}
}
