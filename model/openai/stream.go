package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/openrath/rath/model"
)

var doneMarker = []byte("[DONE]")

// stream reads an SSE body to [DONE] or its end. Without either a
// finish_reason or [DONE] it was cut short, and that is an error. A read
// error after the finish_reason loses at most the usage, so the answer
// stands.
func (r *reply) stream(res *http.Response) (*model.Response, error) {
	dec := ssestream.NewDecoder(res)
	if dec == nil {
		return nil, fmt.Errorf("openai: the stream has no body: %w", io.ErrUnexpectedEOF)
	}
	defer dec.Close()
	done := false
	for !done && dec.Next() {
		data := dec.Event().Data
		switch {
		case bytes.HasPrefix(data, doneMarker):
			done = true
		case len(bytes.TrimSpace(data)) == 0:
		default:
			if err := r.chunk(data); err != nil {
				return nil, err
			}
		}
	}
	if err := dec.Err(); err != nil && !r.finished {
		return nil, fmt.Errorf("openai: reading the stream: %w", err)
	}
	if !done && !r.finished {
		return nil, fmt.Errorf("openai: the stream ended before the answer did: %w", io.ErrUnexpectedEOF)
	}
	return r.end()
}

// chunk takes one chat.completion.chunk.
func (r *reply) chunk(data []byte) error {
	var c openai.ChatCompletionChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%w: stream chunk: %w", model.ErrMalformed, err)
	}
	if err := serverError(c.JSON.ExtraFields, r.clean); err != nil {
		return err
	}
	r.meta(c.Model, c.ID)
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		if err := r.delta(&ch.Delta); err != nil {
			return err
		}
		if ch.FinishReason != "" {
			r.finish, r.finished = ch.FinishReason, true
		}
	}
	if c.JSON.Usage.Valid() {
		return r.send(r.asm.Usage(usage(c.Usage)))
	}
	return nil
}

func (r *reply) delta(d *openai.ChatCompletionChunkChoiceDelta) error {
	if s := reasoning(d.JSON.ExtraFields); s != "" {
		if err := r.send(r.asm.Reasoning(s)); err != nil {
			return err
		}
	}
	if d.Content != "" {
		if err := r.send(r.asm.Text(d.Content)); err != nil {
			return err
		}
	}
	if d.Refusal != "" {
		r.asm.Refusal(d.Refusal)
	}
	for i := range d.ToolCalls {
		tc := &d.ToolCalls[i]
		index := model.NoIndex
		if tc.JSON.Index.Valid() {
			index = int(tc.Index)
		}
		ev, err := r.asm.ToolDelta(index, tc.ID, tc.Function.Name, tc.Function.Arguments)
		if err != nil {
			return err
		}
		if err := r.send(ev); err != nil {
			return err
		}
	}
	return nil
}
