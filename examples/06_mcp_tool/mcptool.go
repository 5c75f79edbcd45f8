package mcptool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool/mcp"
)

// Task is the user's question.
const Task = "What is the difference between forking and merging a session? Check the project glossary."

const instructions = "You answer questions about OpenRath. Look terms up in the glossary and answer from its definitions only."

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "mcp-tool",
		Description: "an agent uses the tools of an in-process MCP server (streamable HTTP) through tool/mcp",
		Build:       build,
	})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, scripted.Func(offline))
	if err != nil {
		return nil, nil, fmt.Errorf("mcp-tool: model: %w", err)
	}
	w := &workflow{rt: rt, model: m}
	return flow.Func(w.run), session.FromUser(Task), nil
}

// workflow runs the agent while the glossary server is up.
type workflow struct {
	rt    *rath.Runtime
	model model.Model
}

func (w *workflow) run(ctx context.Context, s *session.Session) (out *session.Session, err error) {
	url, stop, err := Serve()
	if err != nil {
		return s, err
	}
	defer func() { err = errors.Join(err, stop()) }()
	client, err := mcp.Connect(ctx, mcp.ServerConfig{Name: "glossary", URL: url, Prefix: "glossary_", CallTimeout: 30 * time.Second})
	if err != nil {
		return s, err
	}
	defer func() { err = errors.Join(err, client.Close()) }()
	tools, err := client.Tools(ctx)
	if err != nil {
		return s, err
	}
	librarian, err := agent.New(agent.Config{
		Name:         "librarian",
		Instructions: instructions,
		Model:        w.model,
		Tools:        tools,
		MaxSteps:     6,
		Store:        w.rt.Store,
		Sandboxes:    w.rt.Sandboxes,
	})
	if err != nil {
		return s, fmt.Errorf("mcp-tool: %w", err)
	}
	return librarian.Forward(ctx, s)
}
