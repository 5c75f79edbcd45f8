package model

import (
	"encoding/json"

	"github.com/openrath/rath/session"
)

// Request is one model call: the conversation, the tools offered and the
// parameters.
type Request struct {
	// Model overrides the model name the Model was opened with.
	Model    string
	Messages []session.Message
	Tools    []ToolSpec
	Params   Params
	// NoStream asks the provider for one whole response instead of a stream;
	// the events are then produced from it. For servers that cannot stream.
	NoStream bool

	prefix *digestPrefix // see Continues
}

// ToolSpec is a tool as the model sees it.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON schema of the arguments (an object schema).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Strict asks providers that support it to hold the model to the schema
	// exactly; the schema is sent as given.
	Strict bool `json:"strict,omitempty"`
}

// Params are the sampling and output parameters of a request. They are
// recorded as session.ModelParams.
type Params struct {
	Temperature *float64
	TopP        *float64
	MaxTokens   int
	// ToolChoice is "auto" (or empty), "none", "required", or a tool name.
	ToolChoice        string
	ParallelToolCalls *bool
	Stop              []string
	// ResponseSchema asks for a JSON answer matching this schema.
	ResponseSchema json.RawMessage
	// ResponseSchemaName names the schema where a provider needs a name.
	ResponseSchemaName string
}

// Record returns the parameters as a model_call chunk records them.
func (r *Request) Record() session.ModelParams {
	p := session.ModelParams{
		Temperature: r.Params.Temperature, TopP: r.Params.TopP, MaxTokens: r.Params.MaxTokens,
		ToolChoice: r.Params.ToolChoice, ParallelToolCalls: r.Params.ParallelToolCalls,
		Stop: r.Params.Stop, ResponseSchema: r.Params.ResponseSchema,
	}
	for _, t := range r.Tools {
		p.Tools = append(p.Tools, t.Name)
	}
	return p
}
