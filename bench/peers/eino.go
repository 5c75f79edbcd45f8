package main

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// einoModel is a scripted Eino chat model: it answers by the script, from
// the last message it is given.
type einoModel struct {
	s script
	t *tally
}

var _ model.ToolCallingChatModel = (*einoModel)(nil)

// Generate answers one request.
func (m *einoModel) Generate(ctx context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.t.model.Add(1)
	if err := m.s.wait(ctx); err != nil {
		return nil, err
	}
	var answered string
	if len(input) > 0 {
		answered = input[len(input)-1].ToolCallID
	}
	id, ok := m.s.next(answered)
	if !ok {
		return schema.AssistantMessage(finalAnswer, nil), nil
	}
	call := schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: "noop", Arguments: "{}"}}
	return schema.AssistantMessage("", []schema.ToolCall{call}), nil
}

// Stream answers one request as a one-message stream.
func (m *einoModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// WithTools returns the model itself: the script does not look at the tools.
func (m *einoModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

// einoNoop is the no-op tool, its schema inferred from a Go type.
func einoNoop(t *tally) (tool.InvokableTool, error) {
	return utils.InferTool("noop", "Does nothing.", func(context.Context, struct{}) (string, error) {
		t.tool.Add(1)
		return "ok", nil
	})
}

// einoConfig is the ReAct agent's configuration for script s.
func einoConfig(s script, t *tally) (*react.AgentConfig, error) {
	noop, err := einoNoop(t)
	if err != nil {
		return nil, fmt.Errorf("eino tool: %w", err)
	}
	return &react.AgentConfig{
		ToolCallingModel: &einoModel{s: s, t: t},
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{noop}},
		// Graph steps: the model node and the tools node for each call,
		// the model node once more for the answer.
		MaxStep: 2*s.calls + 1,
	}, nil
}

// einoAgent returns a runner of script s on an Eino ReAct agent.
func einoAgent(ctx context.Context, s script, t *tally) (runner, error) {
	cfg, err := einoConfig(s, t)
	if err != nil {
		return nil, err
	}
	a, err := react.NewAgent(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("eino agent: %w", err)
	}
	return func(ctx context.Context, task string) (string, error) {
		out, err := a.Generate(ctx, []*schema.Message{schema.UserMessage(task)})
		if err != nil {
			return "", fmt.Errorf("eino run: %w", err)
		}
		return out.Content, nil
	}, nil
}
