package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// emptyInput is the tool_use input sent for a call whose arguments were not
// a JSON object: the API requires an object.
var emptyInput = json.RawMessage(`{}`)

// buildMessages returns the system prompt (every system message, in order,
// joined by blank lines) and the conversation as the API wants it: turns
// alternating between user and assistant, tool results as tool_result
// blocks of a user turn. Only trusted (or unlabelled) system messages go
// into the system prompt; a system message labelled otherwise is an error
// (model.ErrUntrustedSystem). Untrusted content stays in the conversation:
// tool results as tool_result blocks, recalled memory and summaries as the
// text of a user turn.
func buildMessages(msgs []session.Message) (string, []sdk.MessageParam, error) {
	var system []string
	var out []sdk.MessageParam
	add := func(role sdk.MessageParamRole, blocks []sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		// Adjacent turns of one role merge: the API requires alternation, and
		// consecutive tool results must share one user turn.
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = mergeBlocks(out[n-1].Content, blocks)
			return
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	for i, m := range msgs {
		switch m.Role {
		case session.RoleSystem:
			if err := model.CheckMessageTrust(i, &msgs[i]); err != nil {
				return "", nil, fmt.Errorf("anthropic: %w", err)
			}
			if strings.TrimSpace(m.Content) != "" {
				system = append(system, m.Content)
			}
		case session.RoleUser:
			if m.Content != "" {
				add(sdk.MessageParamRoleUser, []sdk.ContentBlockParamUnion{sdk.NewTextBlock(m.Content)})
			}
		case session.RoleAssistant:
			add(sdk.MessageParamRoleAssistant, assistantBlocks(m))
		case session.RoleTool:
			add(sdk.MessageParamRoleUser, []sdk.ContentBlockParamUnion{toolResult(m)})
		}
	}
	return strings.Join(system, "\n\n"), out, nil
}

// mergeBlocks appends blocks to a turn's content, keeping its tool_result
// blocks first: the API wants the results of a tool_use turn at the start
// of the user turn after it, and a user message (recalled memory, say)
// may come between the call and its results.
func mergeBlocks(content, blocks []sdk.ContentBlockParamUnion) []sdk.ContentBlockParamUnion {
	for _, b := range blocks {
		if b.OfToolResult == nil {
			content = append(content, b)
			continue
		}
		at := 0
		for at < len(content) && content[at].OfToolResult != nil {
			at++
		}
		content = slices.Insert(content, at, b)
	}
	return content
}

// assistantBlocks is an assistant turn: its signed thinking and redacted
// thinking blocks first (the API requires them ahead of the tool_use blocks
// they led to when extended thinking is on), then its text, then its calls.
// Reasoning without a signature cannot be verified by the API and is left
// out.
func assistantBlocks(m session.Message) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	for _, r := range m.ReasoningBlocks {
		switch {
		case r.Redacted != "":
			blocks = append(blocks, sdk.NewRedactedThinkingBlock(r.Redacted))
		case r.Signature != "":
			blocks = append(blocks, sdk.NewThinkingBlock(r.Signature, r.Text))
		}
	}
	if m.Content != "" {
		blocks = append(blocks, sdk.NewTextBlock(m.Content))
	}
	for _, tc := range m.ToolCalls {
		blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, toolInput(tc), tc.Name))
	}
	return blocks
}

// toolInput is the call's arguments when they are a JSON object, else {}:
// malformed arguments (kept in ArgsText) cannot be sent back as input.
func toolInput(tc session.ToolCall) json.RawMessage {
	args := bytes.TrimSpace(tc.Args)
	if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
		return emptyInput
	}
	return json.RawMessage(args)
}

func toolResult(m session.Message) sdk.ContentBlockParamUnion {
	b := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		b.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	if len(m.Notes) > 0 {
		// The result's evidence notes, in a text block of their own that
		// says it is the runtime's: the content stays the tool's.
		b.Content = append(b.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: session.NotesPart(m.Notes)}})
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &b}
}
