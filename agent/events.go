package agent

import (
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// EventKind says what an Event reports.
type EventKind uint8

const (
	// StepStart: a model call begins (Step is 1-based).
	StepStart EventKind = iota + 1
	// TextDelta and ReasoningDelta carry streamed model output in Delta.
	TextDelta
	ReasoningDelta
	// ToolCallStart carries the call in Call; ToolCallEnd its result in
	// Result.
	ToolCallStart
	ToolCallEnd
	// Usage carries the step's model usage.
	Usage
	// Committed: the step's chunks are durable; Session is the session
	// as committed.
	Committed
	// Done: the run ended; Session is the output session.
	Done
)

// Event is one thing a run reports.
type Event struct {
	Kind    EventKind
	Step    int
	Delta   string
	Call    *session.ToolCall
	Result  *session.ToolResult
	Usage   *session.Usage
	Session *session.Session
}

func fromModel(step int, ev model.Event) (Event, bool) {
	switch ev.Kind {
	case model.EventText:
		return Event{Kind: TextDelta, Step: step, Delta: ev.Delta}, true
	case model.EventReasoning:
		return Event{Kind: ReasoningDelta, Step: step, Delta: ev.Delta}, true
	}
	return Event{}, false
}
