package anthropic

import (
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/openrath/rath/model"
)

// fromBody decodes a non-streaming answer and reads it.
func fromBody(body []byte, requestID string, emit func(model.Event) bool) (*model.Response, error) {
	var msg sdk.Message
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, malformed("%w", err)
	}
	return fromMessage(&msg, requestID, emit)
}

// fromMessage feeds a whole (non-streamed) message through the same
// Assembler as a stream, so the same events are emitted.
func fromMessage(msg *sdk.Message, requestID string, emit func(model.Event) bool) (*model.Response, error) {
	if msg == nil || !msg.JSON.Content.Valid() {
		return nil, malformed("the response is not a message")
	}
	r := &reader{emit: emit, requestID: requestID}
	if err := r.start(*msg); err != nil {
		return nil, err
	}
	for i, cb := range msg.Content {
		if err := r.content(int64(i), cb); err != nil {
			return nil, err
		}
	}
	r.stop = msg.StopReason
	if msg.StopReason == sdk.StopReasonRefusal && msg.StopDetails.Explanation != "" {
		r.asm.Refusal(msg.StopDetails.Explanation)
	}
	return r.finish()
}

// content records one block of a whole message.
func (r *reader) content(i int64, cb sdk.ContentBlockUnion) error {
	r.blocks = append(r.blocks, block{kind: cb.Type})
	b := &r.blocks[i]
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			if err := r.send(r.asm.Text(cb.Text)); err != nil {
				return err
			}
		}
	case "thinking":
		b.signature.WriteString(cb.Signature)
		if err := r.thinking(b, cb.Thinking); err != nil {
			return err
		}
	case "redacted_thinking":
		b.data = cb.Data
	case "tool_use":
		if cb.Name == "" {
			return malformed("tool_use block %d has no name", i)
		}
		if err := r.toolDelta(i, cb.ID, cb.Name, string(cb.Input)); err != nil {
			return err
		}
	}
	return r.close(i)
}
