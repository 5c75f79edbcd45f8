package model

import (
	"fmt"

	"github.com/openrath/rath/session"
)

// EventKind says what an Event carries.
type EventKind uint8

const (
	// EventText carries a piece of the answer text in Delta.
	EventText EventKind = iota + 1
	// EventReasoning carries a piece of readable reasoning in Delta.
	EventReasoning
	// EventToolCallDelta carries part of a tool call: Index says which;
	// Call holds its id and name once known; Delta a piece of its argument
	// text.
	EventToolCallDelta
	// EventToolCall carries a complete tool call in Call.
	EventToolCall
	// EventUsage carries the usage the current attempt has reported so far
	// in Usage (a retried attempt reports afresh).
	EventUsage
	// EventDone ends a successful stream; Response holds the whole answer.
	EventDone
)

var eventNames = [...]string{"", "text", "reasoning", "tool_call_delta", "tool_call", "usage", "done"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && k > 0 {
		return eventNames[k]
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event is one item of a streaming call.
type Event struct {
	Kind     EventKind
	Delta    string
	Index    int
	Call     *session.ToolCall
	Usage    *session.Usage
	Response *Response
}
