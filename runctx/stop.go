package runctx

import (
	"context"
	"fmt"
)

// ErrInterrupted: the run was asked to stop (WithStop) and stopped at a
// safe point. Everything it did is committed and nothing is recorded about
// the stop, so it resumes as a yielded run does: errors.Is(err, ErrYielded)
// holds too.
var ErrInterrupted = fmt.Errorf("runctx: the run was asked to stop; it continues from its last committed step: %w", ErrYielded)

type stopKey struct{}

// stop is what WithStop puts in a context.
type stop struct {
	stopping, abandoned <-chan struct{}
}

// WithStop returns ctx in which a run stops at its next safe point once
// stopping is closed: a model call in flight is cancelled and taken again
// on resume (it has no effect), no new tool call starts, and a tool call in
// flight finishes and its result is committed. Once abandoned is closed
// too (a grace period later), a tool call still running is cancelled; its
// effect is unknown and no result is recorded for it, so a resume treats
// it as a call cut short by a crash (an idempotent tool runs again, any
// other waits for a review). The run returns ErrInterrupted.
func WithStop(ctx context.Context, stopping, abandoned <-chan struct{}) context.Context {
	return context.WithValue(ctx, stopKey{}, stop{stopping: stopping, abandoned: abandoned})
}

// Stopping reports whether ctx's run was asked to stop.
func Stopping(ctx context.Context) bool {
	s, ok := ctx.Value(stopKey{}).(stop)
	return ok && closed(s.stopping)
}

// Abandoned reports whether ctx's run stopped waiting for its tool calls.
func Abandoned(ctx context.Context) bool {
	s, ok := ctx.Value(stopKey{}).(stop)
	return ok && closed(s.abandoned)
}

// UntilStopping returns a context derived from ctx that is cancelled when
// ctx's run is asked to stop (for work that is safe to cut: a model call).
func UntilStopping(ctx context.Context) (context.Context, context.CancelFunc) {
	s, ok := ctx.Value(stopKey{}).(stop)
	return until(ctx, ok, s.stopping)
}

// UntilAbandoned returns a context derived from ctx that is cancelled when
// ctx's run stops waiting for its tool calls.
func UntilAbandoned(ctx context.Context) (context.Context, context.CancelFunc) {
	s, ok := ctx.Value(stopKey{}).(stop)
	return until(ctx, ok, s.abandoned)
}

func until(ctx context.Context, ok bool, ch <-chan struct{}) (context.Context, context.CancelFunc) {
	if !ok || ch == nil {
		return ctx, func() {}
	}
	c, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel(ErrInterrupted)
		case <-done:
		case <-c.Done():
		}
	}()
	return c, func() { close(done); cancel(nil) }
}

func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
