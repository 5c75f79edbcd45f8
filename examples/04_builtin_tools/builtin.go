package builtintools

import (
	"context"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/examples/internal/exsandbox"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

// Task is the user's request.
const Task = "Write greet.sh, a POSIX shell script that prints \"Hello, NAME!\" for the name given as its first argument, " +
	"or \"Hello, world!\" without one, and a README.md explaining how to use it. Test both cases before you answer."

const instructions = "You are a careful engineer working in a sandboxed workspace. Use the tools to do the work; " +
	"test what you write and fix what fails. Finish with a short summary."

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "builtin-tools",
		Description: "an agent writes, runs, fixes and checks a script with the built-in file and command tools",
		Build:       build,
	})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, scripted.Func(offline))
	if err != nil {
		return nil, nil, fmt.Errorf("builtin-tools: model: %w", err)
	}
	engineer, err := agent.New(agent.Config{
		Name:         "engineer",
		Instructions: instructions,
		Model:        m,
		Tools: []tool.Tool{builtin.ListFiles(), builtin.ReadFile(), builtin.WriteFile(), builtin.EditFile(),
			builtin.Grep(), builtin.RunCommand()},
		MaxSteps:  12,
		Store:     rt.Store,
		Sandboxes: rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("builtin-tools: %w", err)
	}
	return engineer, session.FromUser(Task).To(Backend(ctx), session.Spec{}), nil
}

// Backend is the sandbox backend to place the task on: bwrap when
// bubblewrap can run here, else local.
func Backend(ctx context.Context) string { return exsandbox.Backend(ctx) }
