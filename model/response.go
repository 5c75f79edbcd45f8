package model

import (
	"time"

	"github.com/openrath/rath/session"
)

// Response is a completed model call.
type Response struct {
	Text            string
	Reasoning       string
	ReasoningBlocks []session.Reasoning
	Refusal         string
	ToolCalls       []session.ToolCall
	// FinishReason is the provider's, normalised where there is an obvious
	// equivalent: "stop", "tool_calls", "length", "content_filter".
	FinishReason string
	Usage        session.Usage
	// Model is the model that answered, as the provider reports it.
	Model string
	// Provider names the provider ("openai", "anthropic", "scripted").
	Provider string
	// RequestID is the provider's id for the request, when it sends one.
	RequestID string
	// Attempts lists every try, the successful one last.
	Attempts []session.Attempt
	// Latency is the wall time of the whole call, retries included.
	Latency time.Duration
}

// Output returns the response as a model_call chunk records it.
func (r *Response) Output() session.ModelOutput {
	return session.ModelOutput{Text: r.Text, Reasoning: r.Reasoning, ReasoningBlocks: r.ReasoningBlocks,
		Refusal: r.Refusal, ToolCalls: r.ToolCalls, FinishReason: r.FinishReason, Model: r.Model, RequestID: r.RequestID}
}

// Turn returns the assistant turn the response stands for.
func (r *Response) Turn() session.Turn {
	return session.Turn{Text: r.Text, Reasoning: r.Reasoning, ReasoningBlocks: r.ReasoningBlocks,
		Refusal: r.Refusal, ToolCalls: r.ToolCalls}
}

// Record returns the model_call evidence of req answered by r: with the
// request's digest and the evidence of its messages (Request.Parts). A
// request that Continues req then records only the messages it adds.
func (r *Response) Record(req *Request, model string, stream bool) session.ModelCall {
	parts := req.Parts()
	digest := req.Digest()
	if digest != "" {
		req.prefix.recorded = true
	}
	return session.ModelCall{Provider: r.Provider, Model: model, Params: req.Record(), RequestDigest: digest, Parts: parts,
		Stream: stream, Response: r.Output(), Usage: r.Usage, Attempts: r.Attempts, Latency: r.Latency}
}
