package model

import (
	"context"
	"iter"
)

// Model is a language model ready to answer requests.
type Model interface {
	// Provider and Name identify the model, as in "openai:gpt-5.5".
	Provider() string
	Name() string
	// Stream calls the model. It yields events in order and ends with one
	// EventDone carrying the Response; on failure it yields one error
	// (a *CallError listing the attempts) and stops.
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// Provider performs single attempts of a call against one service. New
// turns it into a Model with retries, budgets and pricing.
type Provider interface {
	// Name is the provider's registry name ("openai").
	Name() string
	// Attempt runs one try of req (req.Model is set). It reports what
	// arrives through emit, in order, and returns the whole response; it
	// stops early, returning ctx's or its own error, if emit returns false.
	// HTTP failures are returned as *StatusError.
	Attempt(ctx context.Context, req *Request, emit func(Event) bool) (*Response, error)
}

// Generate calls m and returns the whole response: the non-streaming
// convenience over Stream.
func Generate(ctx context.Context, m Model, req *Request) (*Response, error) {
	var resp *Response
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ev.Kind == EventDone {
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, &CallError{Provider: m.Provider(), Model: m.Name(), Err: ErrMalformed}
	}
	return resp, nil
}
