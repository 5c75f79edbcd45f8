package placement

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

// Backends are the backends tried, in order: the host's, then the remote
// ones (each against an in-process fake unless its service is configured).
var Backends = []string{"local", "bwrap", "docker", "e2b", "cube", "opensandbox"}

// Log receives a line for each backend skipped.
var Log io.Writer = os.Stderr

// Task is the user's request; Prompt is the message a stage adds for its
// backend.
const (
	Task   = "Show that every sandbox has a workspace of its own."
	Prompt = "You are now on the %[1]s sandbox. Write a file named from-%[1]s.txt saying where it was written, " +
		"then run `pwd; ls -A` and tell me what the workspace holds."
	skipped      = "Skipped the %s sandbox: "
	instructions = "You work in a sandbox with file and command tools. Do exactly what you are asked, then report in one sentence."
)

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "placement",
		Description: "the same task on local, bwrap, docker, e2b, cube and opensandbox sandboxes: placement is session state, workspaces are isolated",
		Build:       build,
	})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, scripted.Func(offline))
	if err != nil {
		return nil, nil, fmt.Errorf("placement: model: %w", err)
	}
	worker, err := agent.New(agent.Config{
		Name:         "worker",
		Instructions: instructions,
		Model:        m,
		Tools:        []tool.Tool{builtin.WriteFile(), builtin.RunCommand()},
		MaxSteps:     6,
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("placement: %w", err)
	}
	stages := make([]flow.Module, 0, len(Backends)+1)
	fk := newFakes(rt)
	for _, b := range Backends {
		stages = append(stages, flow.Named(b, stage(b, worker, fk)))
	}
	stages = append(stages, flow.Named("report", flow.Func(report)))
	return flow.Sequential(stages...), session.FromUser(Task), nil
}

// stage places the session on backend and has the worker do the task
// there, or records why the backend was skipped.
func stage(backend string, worker *agent.Agent, fk *fakes) flow.Module {
	return flow.Func(func(ctx context.Context, s *session.Session) (*session.Session, error) {
		node := runctx.Invoke(ctx, "place")
		err := fk.reach(ctx, backend)
		if err == nil {
			err = usable(ctx, backend)
		}
		if err != nil {
			fmt.Fprintf(Log, "placement: skipping %s: %v\n", backend, err)
			return runctx.Record(ctx, s, node, session.Note(fmt.Sprintf(skipped, backend)+err.Error()))
		}
		s, err = runctx.Record(ctx, s, node,
			session.Of(&session.Placement{Backend: backend}),
			session.User(fmt.Sprintf(Prompt, backend)))
		if err != nil {
			return s, err
		}
		return worker.Forward(ctx, s)
	})
}

// usable reports why backend cannot run here, or nil. Available says
// whether the backend can run at all; opening (and closing) a throwaway
// sandbox also catches what it cannot know in advance, such as a missing
// Docker image.
func usable(ctx context.Context, backend string) error {
	b, err := sandbox.Lookup(backend)
	if err != nil {
		return err
	}
	if err := b.Available(ctx); err != nil {
		return err
	}
	if _, remote := b.(sandbox.Provider); remote {
		return nil // a probe would be a sandbox created (and paid for)
	}
	sb, err := b.Open(ctx, session.Spec{})
	if err != nil {
		return err
	}
	dir := sb.WorkspaceDir()
	err = sb.Close()
	_ = os.Remove(dir) // the probe's empty workspace
	return err
}
