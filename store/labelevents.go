package store

import "context"

type labelEventsKey struct{}

// WithLabelEvents returns ctx under which a label write is reported to
// watchers on every store (an Event with Labels set). Without it a store
// may leave label writes out where reporting them costs: PostgreSQL, where
// each is a NOTIFY that holds the notification queue's lock through its
// transaction's flush. SQLite reports every label write (to watchers in
// its process, and, while another process's store watches, to those).
// Write the labels watchers wait for under it, such as a run's state.
func WithLabelEvents(ctx context.Context) context.Context {
	return context.WithValue(ctx, labelEventsKey{}, true)
}

// LabelEvents reports whether ctx asks for label writes to be reported.
func LabelEvents(ctx context.Context) bool {
	v, _ := ctx.Value(labelEventsKey{}).(bool)
	return v
}
