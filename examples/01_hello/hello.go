package hello

import (
	"context"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// Instructions, Question and Answer are the example's conversation; Answer
// is what the offline model says.
const (
	Instructions = "You are a concise assistant. Answer in two sentences at most."
	Question     = "What is a session in OpenRath?"
	Answer       = "A session is an immutable, content-addressed chain of chunks — messages, model calls, " +
		"tool results and other evidence — that flows from agent to agent. " +
		"Every change makes a new head or a new session with lineage, so nothing that happened is ever lost."
)

// Usage is what the offline model reports for its one call.
var Usage = session.Usage{InputTokens: 31, OutputTokens: 64}

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "hello",
		Description: "one agent, one question, one answer: the session's chunks and usage",
		Build:       build,
	})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, scripted.New(model.Response{Text: Answer, Usage: Usage}))
	if err != nil {
		return nil, nil, fmt.Errorf("hello: model: %w", err)
	}
	greeter, err := agent.New(agent.Config{
		Name:         "greeter",
		Instructions: Instructions,
		Model:        m,
		Store:        rt.Store,
		Sandboxes:    rt.Sandboxes,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("hello: %w", err)
	}
	return greeter, session.FromUser(Question), nil
}
