package agent

import "context"

type sinkKey struct{}

// WithEvents returns ctx whose agents hand every event of their runs to
// sink as it happens — streamed text, tool calls and results — with the
// agent's name, when run with Forward (which otherwise keeps only the
// session). sink is called on the agent's goroutine: it must not block.
func WithEvents(ctx context.Context, sink func(agent string, ev Event)) context.Context {
	return context.WithValue(ctx, sinkKey{}, sink)
}

// eventSink is the sink ctx carries, or nil.
func eventSink(ctx context.Context) func(string, Event) {
	f, _ := ctx.Value(sinkKey{}).(func(string, Event))
	return f
}
