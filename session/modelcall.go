package session

import (
	"encoding/json"
	"fmt"
	"time"
)

// ModelParams are the request parameters of a model call, as sent.
type ModelParams struct {
	Temperature       *float64        `json:"temperature,omitempty"`
	TopP              *float64        `json:"top_p,omitempty"`
	MaxTokens         int             `json:"max_tokens,omitempty"`
	ToolChoice        string          `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	Stop              []string        `json:"stop,omitempty"`
	ResponseSchema    json.RawMessage `json:"response_schema,omitempty"`
	// Tools names the tools offered, in the order offered.
	Tools []string `json:"tools,omitempty"`
}

// Attempt is one try at a model request; retried calls have several.
type Attempt struct {
	Status  int           `json:"status,omitempty"` // HTTP status, 0 if none
	Error   string        `json:"error,omitempty"`
	Latency time.Duration `json:"latency_ns"`
}

// ModelOutput is what the provider returned, normalised.
type ModelOutput struct {
	Text            string      `json:"text,omitempty"`
	Reasoning       string      `json:"reasoning,omitempty"`
	ReasoningBlocks []Reasoning `json:"reasoning_blocks,omitempty"`
	Refusal         string      `json:"refusal,omitempty"`
	ToolCalls       []ToolCall  `json:"tool_calls,omitempty"`
	FinishReason    string      `json:"finish_reason,omitempty"`
	Model           string      `json:"model,omitempty"`
	RequestID       string      `json:"request_id,omitempty"`
}

// ModelCall is the body of a model_call chunk: evidence of one model request,
// never shown to a model.
type ModelCall struct {
	Provider string      `json:"provider"`
	Model    string      `json:"model"`
	Params   ModelParams `json:"params"`
	// RequestDigest is "sha256:<hex>" of the canonical request, so replay can
	// tell whether it would send the same request.
	RequestDigest string `json:"request_digest,omitempty"`
	// Parts is the evidence of the request's messages: the role, trust and
	// source of each (see RequestParts). Nil in records made before
	// requests carried it.
	Parts    *RequestParts `json:"parts,omitempty"`
	Stream   bool          `json:"stream,omitempty"`
	Response ModelOutput   `json:"response"`
	// Raw optionally keeps the provider's final response body verbatim.
	Raw      json.RawMessage `json:"raw,omitempty"`
	Usage    Usage           `json:"usage"`
	Attempts []Attempt       `json:"attempts,omitempty"`
	Latency  time.Duration   `json:"latency_ns"`
	// Aggregate marks a record that stands for many calls, such as the usage
	// total of an imported run, rather than one request.
	Aggregate bool `json:"aggregate,omitempty"`
}

func (*ModelCall) Kind() Kind { return KindModelCall }

func (m *ModelCall) validate() error {
	for _, tc := range m.Response.ToolCalls {
		if err := tc.validate(); err != nil {
			return err
		}
	}
	if err := validRaw("model call raw response", m.Raw); err != nil {
		return err
	}
	if err := validRaw("model call response schema", m.Params.ResponseSchema); err != nil {
		return err
	}
	if m.Parts != nil {
		if err := m.Parts.validate(); err != nil {
			return err
		}
	}
	if m.Usage.negative() {
		return fmt.Errorf("%w: model call usage has a negative count", ErrInvalid)
	}
	return nil
}
