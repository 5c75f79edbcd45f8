package anthropic

import (
	"fmt"
	"io"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/openrath/rath/model"
)

// readStream consumes a streamed answer up to message_stop. A stream that
// ends before message_stop is an error wrapping io.ErrUnexpectedEOF, never
// a partial answer.
func readStream(stream *ssestream.Stream[sdk.MessageStreamEventUnion], requestID string, emit func(model.Event) bool) (*model.Response, error) {
	r := &reader{emit: emit, requestID: requestID}
	for stream.Next() {
		if err := r.event(stream.Current()); err != nil {
			return nil, err
		}
		if r.finished {
			return r.finish()
		}
	}
	if err := stream.Err(); err != nil {
		return nil, mapError(err)
	}
	return nil, fmt.Errorf("anthropic: the stream ended before message_stop: %w", io.ErrUnexpectedEOF)
}

// event applies one streamed event. Events of types this package does not
// know are skipped; known ones missing the fields they need are malformed.
func (r *reader) event(ev sdk.MessageStreamEventUnion) error {
	if ev.Type == "" {
		return malformed("stream event without a type")
	}
	if !r.started && ev.Type != "message_start" {
		switch ev.Type {
		case "message_delta", "message_stop", "content_block_start", "content_block_delta", "content_block_stop":
			return malformed("%s before message_start", ev.Type)
		}
		return nil
	}
	switch ev.Type {
	case "message_start":
		if r.started {
			return malformed("a second message_start")
		}
		if !ev.JSON.Message.Valid() {
			return malformed("message_start without a message")
		}
		return r.start(ev.Message)
	case "content_block_start":
		if !ev.JSON.Index.Valid() || !ev.JSON.ContentBlock.Valid() {
			return malformed("content_block_start without an index or a content_block")
		}
		return r.blockStart(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		if !ev.JSON.Index.Valid() || !ev.JSON.Delta.Valid() {
			return malformed("content_block_delta without an index or a delta")
		}
		return r.delta(ev.Index, ev.Delta)
	case "content_block_stop":
		if !ev.JSON.Index.Valid() {
			return malformed("content_block_stop without an index")
		}
		return r.blockStop(ev.Index)
	case "message_delta":
		if !ev.JSON.Delta.Valid() {
			return malformed("message_delta without a delta")
		}
		return r.messageDelta(ev.Delta, ev.Usage)
	case "message_stop":
		r.finished = true
	}
	return nil
}
