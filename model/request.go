package model

import (
	"crypto/sha256"
	"encoding/hex"
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

// Digest is "sha256:<hex>" over the request — model, messages, tools and
// parameters — so replay can tell whether it would send the same request.
// A message projected from a chunk stands in by its role and chunk id (a
// content hash of the chunk and its chain), which keeps the digest cheap on
// long sessions; other messages by their JSON.
func (r *Request) Digest() string {
	h := sha256.New()
	w := func(b []byte) {
		var n [8]byte
		for i, l := 0, uint64(len(b)); i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(b)
	}
	w([]byte(r.Model))
	var buf []byte
	for _, m := range r.Messages {
		if m.Chunk != "" {
			buf = append(append(append(buf[:0], m.Role...), 0), m.Chunk...)
			w(buf)
			continue
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return ""
		}
		w(raw)
	}
	// Tools field by field (their schemas are raw JSON already), then the
	// parameters as recorded.
	w([]byte{byte(len(r.Tools)), byte(len(r.Tools) >> 8)})
	for _, t := range r.Tools {
		strict := byte(0)
		if t.Strict {
			strict = 1
		}
		w([]byte(t.Name))
		w([]byte(t.Description))
		w(t.Parameters)
		w([]byte{strict})
	}
	params, err := json.Marshal(r.Record())
	if err != nil {
		return ""
	}
	w(params)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
