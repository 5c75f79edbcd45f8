package customtool

import (
	"context"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Task is the user's question.
const Task = "I put $10,000 in a savings account paying 4.5% a year, compounded monthly. How much will I have after 10 years?"

const instructions = "You answer money questions. Use the compound_interest tool for any calculation; never compute by hand."

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "custom-tool",
		Description: "a typed tool made with tool.Func; bad arguments get an invalid_arguments result and the model corrects itself",
		Build:       build,
	})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, scripted.Func(offline))
	if err != nil {
		return nil, nil, fmt.Errorf("custom-tool: model: %w", err)
	}
	advisor, err := agent.New(agent.Config{
		Name:         "advisor",
		Instructions: instructions,
		Model:        m,
		Tools:        []tool.Tool{Calculator()},
		MaxSteps:     6,
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("custom-tool: %w", err)
	}
	return advisor, session.FromUser(Task), nil
}
