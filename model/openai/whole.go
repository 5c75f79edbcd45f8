package openai

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/openai/openai-go/v3"

	"github.com/openrath/rath/model"
)

// maxBody bounds a whole (non-streamed) answer.
const maxBody = 64 << 20

// whole reads a chat.completion object and reports it as the events a
// stream of it would have produced.
func (r *reply) whole(body io.Reader) (*model.Response, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("openai: reading the response: %w", err)
	}
	if len(raw) > maxBody {
		return nil, fmt.Errorf("%w: the response is over %d bytes", model.ErrMalformed, maxBody)
	}
	var c openai.ChatCompletion
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%w: completion: %w", model.ErrMalformed, err)
	}
	if err := serverError(c.JSON.ExtraFields, r.clean); err != nil {
		return nil, err
	}
	ch := first(c.Choices)
	if ch == nil {
		return nil, fmt.Errorf("%w: the completion has no choices", model.ErrMalformed)
	}
	r.meta(c.Model, c.ID)
	m := &ch.Message
	if s := reasoning(m.JSON.ExtraFields); s != "" {
		if err := r.send(r.asm.Reasoning(s)); err != nil {
			return nil, err
		}
	}
	if m.Content != "" {
		if err := r.send(r.asm.Text(m.Content)); err != nil {
			return nil, err
		}
	}
	if m.Refusal != "" {
		r.asm.Refusal(m.Refusal)
	}
	for i, tc := range m.ToolCalls {
		ev, err := r.asm.ToolDelta(i, tc.ID, tc.Function.Name, tc.Function.Arguments)
		if err != nil {
			return nil, err
		}
		if err := r.send(ev); err != nil {
			return nil, err
		}
	}
	if c.JSON.Usage.Valid() {
		if err := r.send(r.asm.Usage(usage(c.Usage))); err != nil {
			return nil, err
		}
	}
	r.finish = ch.FinishReason
	return r.end()
}

// first is the choice with index 0.
func first(cs []openai.ChatCompletionChoice) *openai.ChatCompletionChoice {
	for i := range cs {
		if cs[i].Index == 0 {
			return &cs[i]
		}
	}
	return nil
}
