package session

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ToolCall is one tool invocation requested by a model.
//
// Args holds the arguments as compact JSON. A model that sends arguments that
// are not valid JSON still gets its call recorded: Args is then empty and
// ArgsText keeps exactly what the model sent, so the agent can answer with an
// error result instead of losing the turn.
type ToolCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args,omitempty"`
	ArgsText string          `json:"args_text,omitempty"`
}

// NewToolCall builds a ToolCall from the argument text a model produced. An
// empty or all-blank argument string means no arguments and becomes {}.
func NewToolCall(id, name, args string) ToolCall {
	tc := ToolCall{ID: id, Name: name}
	trimmed := bytes.TrimSpace([]byte(args))
	switch {
	case len(trimmed) == 0:
		tc.Args = json.RawMessage("{}")
	case !json.Valid(trimmed):
		tc.ArgsText = args
	case bytes.ContainsAny(trimmed, " \t\r\n"):
		var buf bytes.Buffer
		_ = json.Compact(&buf, trimmed) // valid input cannot fail
		tc.Args = json.RawMessage(buf.Bytes())
	default: // compact already (trimmed is a copy of args)
		tc.Args = json.RawMessage(trimmed)
	}
	return tc
}

// ArgsValid reports whether the call carries well-formed JSON arguments.
func (tc ToolCall) ArgsValid() bool { return len(tc.Args) > 0 }

// ArgsString returns the arguments as the model should see them again: the
// JSON arguments, or the malformed text it sent.
func (tc ToolCall) ArgsString() string {
	if len(tc.Args) > 0 {
		return string(tc.Args)
	}
	return tc.ArgsText
}

func (tc ToolCall) validate() error {
	if tc.Name == "" {
		return fmt.Errorf("%w: tool call %q has no name", ErrInvalid, tc.ID)
	}
	if len(tc.Args) > 0 && tc.ArgsText != "" {
		return fmt.Errorf("%w: tool call %q has both args and args_text", ErrInvalid, tc.ID)
	}
	return validRaw("tool call args", tc.Args)
}

// Reasoning is one block of a model's reasoning, kept so that providers that
// require it (Anthropic thinking blocks) can be sent it back verbatim.
type Reasoning struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Redacted holds an opaque, encrypted block the provider returned in place
	// of readable text.
	Redacted string `json:"redacted,omitempty"`
}

// Turn is the body of an assistant chunk: what the model said and asked for.
type Turn struct {
	Text string `json:"text,omitempty"`
	// Reasoning is the model's readable reasoning, concatenated.
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningBlocks keeps provider reasoning blocks with their signatures.
	ReasoningBlocks []Reasoning `json:"reasoning_blocks,omitempty"`
	Refusal         string      `json:"refusal,omitempty"`
	ToolCalls       []ToolCall  `json:"tool_calls,omitempty"`
}

func (*Turn) Kind() Kind { return KindAssistant }

func (t *Turn) validate() error {
	for i, tc := range t.ToolCalls {
		if err := tc.validate(); err != nil {
			return err
		}
		// Turns hold a handful of calls: a quadratic scan beats a map here,
		// and this runs for every chunk a store loads.
		for _, earlier := range t.ToolCalls[:i] {
			if tc.ID != "" && earlier.ID == tc.ID {
				return fmt.Errorf("%w: tool call id %q appears twice in one turn", ErrInvalid, tc.ID)
			}
		}
	}
	return nil
}
