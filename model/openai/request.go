package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// defaultSchemaName names a response schema the request left unnamed.
const defaultSchemaName = "response"

// params translates req into a Chat Completions request body.
func params(req *model.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: req.Model}
	var err error
	if p.Messages, err = messages(req.Messages); err != nil {
		return p, err
	}
	if p.Tools, err = tools(req.Tools); err != nil {
		return p, err
	}
	return p, sampling(&p, req.Params, len(p.Tools) > 0)
}

// messages maps the conversation to chat messages, role for role: only
// trusted (or unlabelled) system messages go out as system messages; a
// system message labelled otherwise fails the request
// (model.ErrUntrustedSystem). Untrusted content comes as tool messages and
// as user messages quoting it.
func messages(in []session.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(in))
	for i, m := range in {
		switch m.Role {
		case session.RoleSystem:
			if err := model.CheckMessageTrust(i, &in[i]); err != nil {
				return nil, fmt.Errorf("openai: %w", err)
			}
			out = append(out, openai.SystemMessage(m.Content))
		case session.RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case session.RoleAssistant:
			out = append(out, assistant(m))
		case session.RoleTool:
			out = append(out, toolMessage(m))
		default:
			return nil, fmt.Errorf("openai: message %d has role %q, which chat completions has no place for", i, m.Role)
		}
	}
	return out, nil
}

// toolMessage is a tool result: its content as the tool returned it, and,
// when the result has evidence notes (a cut, a server restarted before the
// call), a second text part of their own that says it is the runtime's
// (session.NotesPart), never written into the content.
func toolMessage(m session.Message) openai.ChatCompletionMessageParamUnion {
	if len(m.Notes) == 0 {
		return openai.ToolMessage(m.Content, m.ToolCallID)
	}
	parts := make([]openai.ChatCompletionContentPartTextParam, 0, 2)
	if m.Content != "" {
		parts = append(parts, openai.ChatCompletionContentPartTextParam{Text: m.Content})
	}
	parts = append(parts, openai.ChatCompletionContentPartTextParam{Text: session.NotesPart(m.Notes)})
	return openai.ToolMessage(parts, m.ToolCallID)
}

// assistant is an assistant turn with its tool calls. Reasoning is not sent
// back: the Chat Completions API takes none.
func assistant(m session.Message) openai.ChatCompletionMessageParamUnion {
	a := &openai.ChatCompletionAssistantMessageParam{}
	if m.Content != "" || len(m.ToolCalls) == 0 {
		a.Content.OfString = openai.String(m.Content)
	}
	for _, tc := range m.ToolCalls {
		args := tc.ArgsString()
		if args == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: a}
}

// tools declares the function tools. Each schema is sent as given, byte for
// byte up to whitespace: not through a map, which would reorder its keys and
// round its large numbers.
func tools(in []model.ToolSpec) ([]openai.ChatCompletionToolUnionParam, error) {
	var out []openai.ChatCompletionToolUnionParam
	for _, t := range in {
		fd := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		if t.Strict {
			fd.Strict = openai.Bool(true)
		}
		if len(t.Parameters) > 0 {
			if !json.Valid(t.Parameters) {
				return nil, fmt.Errorf("openai: tool %q: parameters are not valid JSON", t.Name)
			}
			fd.SetExtraFields(map[string]any{"parameters": t.Parameters})
		}
		out = append(out, openai.ChatCompletionFunctionTool(fd))
	}
	return out, nil
}

// sampling sets the parameters. Tool choice and parallel tool calls are sent
// only with tools: OpenAI refuses them otherwise.
func sampling(p *openai.ChatCompletionNewParams, in model.Params, haveTools bool) error {
	if in.Temperature != nil {
		p.Temperature = openai.Float(*in.Temperature)
	}
	if in.TopP != nil {
		p.TopP = openai.Float(*in.TopP)
	}
	if in.MaxTokens > 0 {
		p.MaxCompletionTokens = openai.Int(int64(in.MaxTokens))
	}
	if haveTools {
		switch in.ToolChoice {
		case "":
		case "auto", "none", "required":
			p.ToolChoice.OfAuto = openai.String(in.ToolChoice)
		default:
			p.ToolChoice.OfFunctionToolChoice = &openai.ChatCompletionNamedToolChoiceParam{
				Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: in.ToolChoice},
			}
		}
		if in.ParallelToolCalls != nil {
			p.ParallelToolCalls = openai.Bool(*in.ParallelToolCalls)
		}
	}
	if len(in.Stop) > 0 {
		p.Stop.OfStringArray = in.Stop
	}
	if len(in.ResponseSchema) > 0 {
		if !json.Valid(in.ResponseSchema) {
			return fmt.Errorf("openai: the response schema is not valid JSON")
		}
		name := in.ResponseSchemaName
		if name == "" {
			name = defaultSchemaName
		}
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name: name, Strict: openai.Bool(true), Schema: in.ResponseSchema,
			},
		}
	}
	return nil
}
