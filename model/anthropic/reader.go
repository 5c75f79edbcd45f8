package anthropic

import (
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// reader turns the Messages API's content (streamed events, or the blocks
// of a whole message) into Assembler calls, passing the events on.
type reader struct {
	asm       model.Assembler
	emit      func(model.Event) bool
	requestID string
	counts    counts
	// pending is the usage of message_start, held back until the first
	// output so that an attempt failing before any output (an overloaded
	// error event right after message_start) can still be retried.
	pending  *model.Event
	stop     sdk.StopReason
	blocks   []block
	started  bool
	finished bool
}

// block is one content block of the answer.
type block struct {
	kind      string
	thinking  strings.Builder
	signature strings.Builder
	data      string
	// startInput is the input a tool_use block started with; sent as the
	// arguments only if no input_json_delta follows.
	startInput string
	gotInput   bool
	stopped    bool
}

func (r *reader) send(ev model.Event) error {
	if r.pending != nil {
		p := *r.pending
		r.pending = nil
		if !r.emit(p) {
			return errStopped
		}
	}
	if !r.emit(ev) {
		return errStopped
	}
	return nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("anthropic: %w: "+format, append([]any{model.ErrMalformed}, args...)...)
}

// start records the answering message: model, id, and input usage.
func (r *reader) start(msg sdk.Message) error {
	r.started = true
	rid := r.requestID
	if rid == "" {
		rid = msg.ID
	}
	r.asm.Meta(string(msg.Model), rid)
	r.counts.fromStart(msg.Usage)
	return r.usage(false)
}

// usage reports the counts; held back as pending unless now is set.
func (r *reader) usage(now bool) error {
	u := r.counts.usage()
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || u.ReasoningTokens < 0 {
		return malformed("negative token count (%s)", u)
	}
	ev := r.asm.Usage(u)
	if !now {
		r.pending = &ev
		return nil
	}
	return r.send(ev)
}

// blockStart opens content block index i (which must be the next one).
func (r *reader) blockStart(i int64, cb sdk.ContentBlockStartEventContentBlockUnion) error {
	if i != int64(len(r.blocks)) {
		return malformed("content block %d started, expected %d", i, len(r.blocks))
	}
	r.blocks = append(r.blocks, block{kind: cb.Type})
	b := &r.blocks[i]
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			return r.send(r.asm.Text(cb.Text))
		}
	case "thinking":
		b.signature.WriteString(cb.Signature)
		return r.thinking(b, cb.Thinking)
	case "redacted_thinking":
		b.data = cb.Data
	case "tool_use":
		if cb.Name == "" {
			return malformed("tool_use block %d has no name", i)
		}
		if in := strings.TrimSpace(cb.JSON.Input.Raw()); in != "" && in != "{}" && in != "null" {
			b.startInput = in
		}
		return r.toolDelta(i, cb.ID, cb.Name, "")
	}
	// Server tool blocks and types this package does not know carry
	// nothing the Response holds.
	return nil
}

func (r *reader) thinking(b *block, s string) error {
	if s == "" {
		return nil
	}
	b.thinking.WriteString(s)
	return r.send(r.asm.Reasoning(s))
}

func (r *reader) toolDelta(i int64, id, name, args string) error {
	ev, err := r.asm.ToolDelta(int(i), id, name, args)
	if err != nil {
		return err
	}
	return r.send(ev)
}

// delta applies a content_block_delta to block i.
func (r *reader) delta(i int64, d sdk.MessageStreamEventUnionDelta) error {
	if i < 0 || i >= int64(len(r.blocks)) {
		return malformed("%s for content block %d of %d", d.Type, i, len(r.blocks))
	}
	b := &r.blocks[i]
	if b.stopped {
		return malformed("%s for content block %d after its stop", d.Type, i)
	}
	want := ""
	switch d.Type {
	case "text_delta":
		want = "text"
	case "input_json_delta":
		want = "tool_use"
	case "thinking_delta", "signature_delta":
		want = "thinking"
	default:
		return nil // citations and deltas of newer types
	}
	if b.kind != want {
		return malformed("%s for a %s block", d.Type, b.kind)
	}
	switch d.Type {
	case "text_delta":
		return r.send(r.asm.Text(d.Text))
	case "input_json_delta":
		b.gotInput = true
		return r.toolDelta(i, "", "", d.PartialJSON)
	case "thinking_delta":
		return r.thinking(b, d.Thinking)
	default:
		b.signature.WriteString(d.Signature)
		return nil
	}
}

// blockStop closes block i, recording a thinking block whole.
func (r *reader) blockStop(i int64) error {
	if i < 0 || i >= int64(len(r.blocks)) {
		return malformed("content_block_stop for content block %d of %d", i, len(r.blocks))
	}
	return r.close(i)
}

func (r *reader) close(i int64) error {
	b := &r.blocks[i]
	if b.stopped {
		return nil
	}
	b.stopped = true
	switch b.kind {
	case "thinking":
		r.asm.ReasoningBlock(session.Reasoning{Text: b.thinking.String(), Signature: b.signature.String()}, true)
	case "redacted_thinking":
		r.asm.ReasoningBlock(session.Reasoning{Redacted: b.data}, false)
	case "tool_use":
		if !b.gotInput && b.startInput != "" {
			return r.toolDelta(i, "", "", b.startInput)
		}
	}
	return nil
}

// messageDelta records the stop reason and the final usage.
func (r *reader) messageDelta(d sdk.MessageStreamEventUnionDelta, u sdk.MessageDeltaUsage) error {
	if d.StopReason != "" {
		r.stop = d.StopReason
	}
	if d.StopReason == sdk.StopReasonRefusal && d.StopDetails.Explanation != "" {
		r.asm.Refusal(d.StopDetails.Explanation)
	}
	r.counts.fromDelta(u)
	return r.usage(true)
}

// finish closes any block left open, completes the response and emits its
// tool calls.
func (r *reader) finish() (*model.Response, error) {
	for i := range r.blocks {
		if err := r.close(int64(i)); err != nil {
			return nil, err
		}
	}
	evs, resp, err := r.asm.Finish(finishReason(r.stop))
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	for _, ev := range evs {
		if err := r.send(ev); err != nil {
			return nil, err
		}
	}
	if r.pending != nil {
		p := *r.pending
		r.pending = nil
		if !r.emit(p) {
			return nil, errStopped
		}
	}
	return resp, nil
}
