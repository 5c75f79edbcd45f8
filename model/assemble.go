package model

import (
	"fmt"
	"strings"

	"github.com/openrath/rath/session"
)

// Assembler builds a Response from the pieces a provider streams, and the
// Events that report them. Providers feed it in arrival order.
//
// Tool calls arrive as deltas keyed by index. Some OpenAI-compatible servers
// send no index: a delta without one continues the latest call unless it
// carries a new call id, which starts the next call.
type Assembler struct {
	text, reasoning strings.Builder
	blocks          []session.Reasoning
	calls           []*callParts
	byIndex         map[int]*callParts
	usage           session.Usage
	haveUsage       bool
	resp            Response
}

type callParts struct {
	index    int
	id, name string
	args     strings.Builder
}

// NoIndex marks a tool-call delta that carried no index.
const NoIndex = -1

// Text records a piece of answer text.
func (a *Assembler) Text(s string) Event {
	a.text.WriteString(s)
	return Event{Kind: EventText, Delta: s}
}

// Reasoning records a piece of readable reasoning.
func (a *Assembler) Reasoning(s string) Event {
	a.reasoning.WriteString(s)
	return Event{Kind: EventReasoning, Delta: s}
}

// ReasoningBlock records a whole provider reasoning block (with its
// signature, or redacted). Its text is not added to Reasoning again when the
// text was streamed through Reasoning already; pass streamed=true then.
func (a *Assembler) ReasoningBlock(b session.Reasoning, streamed bool) {
	a.blocks = append(a.blocks, b)
	if !streamed && b.Text != "" {
		a.reasoning.WriteString(b.Text)
	}
}

// Refusal records refusal text.
func (a *Assembler) Refusal(s string) { a.resp.Refusal += s }

// ToolDelta records part of tool call index (NoIndex if the provider sent
// none): its id and name when first known, and a piece of argument text.
func (a *Assembler) ToolDelta(index int, id, name, args string) (Event, error) {
	if a.byIndex == nil {
		a.byIndex = map[int]*callParts{}
	}
	var c *callParts
	switch {
	case index >= 0:
		c = a.byIndex[index]
		if c == nil {
			c = &callParts{index: index}
			a.byIndex[index] = c
			a.calls = append(a.calls, c)
		}
	case len(a.calls) > 0 && (id == "" || id == a.calls[len(a.calls)-1].id):
		c = a.calls[len(a.calls)-1]
	default:
		c = &callParts{index: len(a.calls)}
		for a.byIndex[c.index] != nil {
			c.index++
		}
		a.byIndex[c.index] = c
		a.calls = append(a.calls, c)
	}
	if id != "" {
		if c.id != "" && c.id != id {
			return Event{}, fmt.Errorf("%w: tool call %d changed its id from %q to %q", ErrMalformed, c.index, c.id, id)
		}
		c.id = id
	}
	switch {
	case name == "" || name == c.name: // absent, or repeated whole
	case c.name == "":
		c.name = name
	default:
		c.name += name // some servers stream the name in pieces
	}
	c.args.WriteString(args)
	return Event{Kind: EventToolCallDelta, Index: c.index, Delta: args, Call: &session.ToolCall{ID: c.id, Name: c.name}}, nil
}

// Usage records usage; providers that report it in parts (input at the
// start, output at the end) call it with each part: non-zero fields
// replace earlier values.
func (a *Assembler) Usage(u session.Usage) Event {
	a.haveUsage = true
	set := func(dst *int64, v int64) {
		if v != 0 {
			*dst = v
		}
	}
	set(&a.usage.InputTokens, u.InputTokens)
	set(&a.usage.OutputTokens, u.OutputTokens)
	set(&a.usage.CacheReadTokens, u.CacheReadTokens)
	set(&a.usage.CacheWriteTokens, u.CacheWriteTokens)
	set(&a.usage.ReasoningTokens, u.ReasoningTokens)
	if u.CostUSD != 0 {
		a.usage.CostUSD = u.CostUSD
	}
	cp := a.usage
	return Event{Kind: EventUsage, Usage: &cp}
}

// Meta records the answering model and the provider's request id.
func (a *Assembler) Meta(model, requestID string) {
	if model != "" {
		a.resp.Model = model
	}
	if requestID != "" {
		a.resp.RequestID = requestID
	}
}

// Finish completes the response. It returns the complete tool calls as
// EventToolCall events, then the response (the caller yields EventDone). A
// call without a name is malformed; one without an id gets "call_<index>".
func (a *Assembler) Finish(finishReason string) ([]Event, *Response, error) {
	r := a.resp
	r.Text = a.text.String()
	r.Reasoning = a.reasoning.String()
	r.ReasoningBlocks = a.blocks
	r.Usage = a.usage
	r.FinishReason = finishReason
	var evs []Event
	for _, c := range a.calls {
		if c.name == "" {
			return nil, nil, fmt.Errorf("%w: tool call %d has no name", ErrMalformed, c.index)
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", c.index)
		}
		tc := session.NewToolCall(id, c.name, c.args.String())
		r.ToolCalls = append(r.ToolCalls, tc)
		evs = append(evs, Event{Kind: EventToolCall, Index: c.index, Call: &tc})
	}
	if r.FinishReason == "" {
		r.FinishReason = "stop"
		if len(r.ToolCalls) > 0 {
			r.FinishReason = "tool_calls"
		}
	}
	return evs, &r, nil
}
