package approval

import (
	"context"
	"fmt"
	"os"

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

// Name is the workflow's registered name.
const Name = "approval"

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: Name,
		Description: "an agent whose run_command calls need approval pauses, gets a verdict (automatic in `rath run`), and continues",
		Build:       build})
}

// Task is what the releaser is asked.
const Task = "Cut release v1.4.0: add a CHANGELOG.md entry (\"Parallel branches get their own copy of the workspace.\") " +
	"and package it as release/rath-v1.4.0.tar.gz."

// VerdictEnv names the variable that makes the example reject instead of
// approve.
const VerdictEnv = "RATH_EXAMPLE_VERDICT"

// verdict is the automatic verdict: approve, unless VerdictEnv says reject.
func verdict() agent.Verdict {
	if os.Getenv(VerdictEnv) == "reject" {
		return agent.Verdict{Approve: false, By: "example", Reason: "the example decides automatically, and " + VerdictEnv + "=reject asks it to refuse"}
	}
	return agent.Verdict{Approve: true, By: "example", Reason: "`rath run` has no one to ask, so the example approves automatically"}
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, scripted.Func(release))
	if err != nil {
		return nil, nil, err
	}
	a, err := agent.New(agent.Config{
		Name: "releaser",
		Instructions: "You cut releases in the workspace: write files with write_file and run commands with run_command. " +
			"Commands need a human's approval; if one is rejected, say what was not done.",
		Model: m, Tools: []tool.Tool{builtin.WriteFile(), builtin.RunCommand()}, MaxSteps: 6,
		NeedApproval: []string{"run_command"},
		Store:        rt.Store, Sandboxes: rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("approval: %w", err)
	}
	in := session.FromUser(Task).To(exsandbox.Backend(ctx), session.Spec{})
	return &gate{agent: a, store: rt.Store, verdict: verdict()}, in, nil
}
