package openai

import (
	"context"
	"fmt"

	"github.com/openrath/rath/model"
)

// errStopped ends an attempt whose consumer stopped listening.
var errStopped = fmt.Errorf("openai: the consumer stopped reading: %w", context.Canceled)

// reply turns what the server sends, streamed or whole, into events and a
// Response, through one Assembler.
type reply struct {
	ctx  context.Context
	emit func(model.Event) bool
	asm  model.Assembler
	// headerID is the x-request-id response header; without it the
	// completion id stands for the request.
	headerID string
	// clean readies provider text for an error message.
	clean    func(string) string
	finish   string
	finished bool
}

func newReply(ctx context.Context, emit func(model.Event) bool, requestID string, clean func(string) string) *reply {
	r := &reply{ctx: ctx, emit: emit, headerID: requestID, clean: clean}
	r.asm.Meta("", requestID)
	return r
}

// send passes ev on; the error says the consumer stopped.
func (r *reply) send(ev model.Event) error {
	if r.emit(ev) {
		return nil
	}
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return errStopped
}

func (r *reply) meta(modelName, completionID string) {
	if r.headerID != "" {
		completionID = ""
	}
	r.asm.Meta(modelName, completionID)
}

// end completes the response and reports its tool calls.
func (r *reply) end() (*model.Response, error) {
	evs, resp, err := r.asm.Finish(finishReason(r.finish))
	if err != nil {
		return nil, err
	}
	for _, ev := range evs {
		if err := r.send(ev); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// finishReason normalises the deprecated function_call reason.
func finishReason(s string) string {
	if s == "function_call" {
		return "tool_calls"
	}
	return s
}
