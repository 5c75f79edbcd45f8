// Package streaming shows a run as it happens: agent.Run yields events
// while the agent works, and the example prints them and sums up the
// usage and cost of every model call.
//
// agent.Run(ctx, s) is an iterator over (Event, error). For each step it
// yields StepStart; TextDelta (and ReasoningDelta) as the model streams its
// answer; Usage with the step's token counts and cost; ToolCallStart for
// every call the model made and ToolCallEnd with each result, in call
// order; and Committed each time the store has made the session durable
// (before the first step, after each step, and before running tools that
// must not run twice). The last event is Done
// with the output session — or an error, with the session as far as it
// got. Forward is the same loop that keeps only the last session. The
// consumer sets the pace: nothing is buffered behind a slow reader.
//
// The workflow is a flow.Func that consumes the events of a "navigator"
// agent with a distance_km tool (great-circle distances between a few
// cities), writes them to Out as they come — the text word by word, every
// other event as a bracketed line — and records a summary note: per model
// call the tokens, the cost and the tools called, then the totals. The
// note is built only from what a replay reproduces too: a replay serves
// each model call whole from the record, so it has no text deltas to
// stream.
//
// Cost comes from a model.Price (US dollars per million tokens): the
// offline model is the scripted provider wrapped with model.New and Price,
// so every call's usage carries its cost, and the session's Usage() sums
// them. Live models are priced from the "prices" of the configuration file
// (see docs/models.md); without a price the cost shows as zero.
//
//	go run ./cmd/rath run streaming
//	go run ./cmd/rath show <the printed id>
package streaming
