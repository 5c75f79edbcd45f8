package runctx

import (
	"context"
	"errors"
)

// ErrYielded: the run stopped at a step boundary because its slice ended
// (WithSlice). Everything it did is committed and nothing was recorded
// about the stop: replay.Resume continues the run, here or on another
// process, from where it stopped.
var ErrYielded = errors.New("runctx: the slice ended; the run continues from its last committed step")

type sliceKey struct{}

// WithSlice returns ctx in which every agent asks more before each live
// model call (one served from a record does not count) and stops with
// ErrYielded when it answers false. more is called from every agent of a
// run, concurrently in parallel branches; the first call of a slice should
// answer true, so that each slice makes progress.
func WithSlice(ctx context.Context, more func() bool) context.Context {
	return context.WithValue(ctx, sliceKey{}, more)
}

// SliceOver reports whether ctx's slice has ended (asking its more).
func SliceOver(ctx context.Context) bool {
	more, _ := ctx.Value(sliceKey{}).(func() bool)
	return more != nil && !more()
}
