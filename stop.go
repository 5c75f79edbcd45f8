package rath

import (
	"context"
	"errors"
	"time"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// ErrInterrupted: the run was asked to stop (StopOn) and stopped at a safe
// point; it is unfinished, and Resume finishes it. errors.Is(err,
// runctx.ErrInterrupted) holds too.
var ErrInterrupted = errors.New("rath: the run was interrupted")

// DefaultGrace is how long a stopping run waits, by default, for the tool
// calls in flight to finish before it gives up on them.
const DefaultGrace = 10 * time.Second

// StopOn has the run stop at its next safe point once stop is closed (the
// first Ctrl-C of a command line): a model call in flight is cut (it had
// no effect, and is made again on resume), no new step starts, and a tool
// call in flight finishes and its result is committed. A tool call still
// running grace later (DefaultGrace if grace <= 0) is cancelled: its effect
// is unknown, and no result is recorded for it, so Resume treats it as a
// call a crash cut short — an idempotent tool runs again with the same
// idempotency key, any other waits for a review. The run then returns
// ErrInterrupted and stays unfinished: it is shown interrupted, and Resume
// finishes it. Run and Resume take it.
func StopOn(stop <-chan struct{}, grace time.Duration) RunOption {
	if grace <= 0 {
		grace = DefaultGrace
	}
	return func(o *runOptions) { o.stop, o.grace = stop, grace }
}

// stoppable is ctx under o's stop, if any, with the function that ends
// the grace timer's goroutine.
func (o *runOptions) stoppable(ctx context.Context) (context.Context, func()) {
	if o.stop == nil {
		return ctx, func() {}
	}
	abandoned, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-o.stop:
		case <-done:
			return
		}
		t := time.NewTimer(o.grace)
		defer t.Stop()
		select {
		case <-t.C:
			close(abandoned)
		case <-done:
		}
	}()
	return runctx.WithStop(ctx, o.stop, abandoned), func() { close(done) }
}

// interrupted reports whether err says a run stopped to go on later, and
// gives the error a caller sees then.
func interrupted(run session.ID, err error) (bool, error) {
	if !errors.Is(err, runctx.ErrInterrupted) {
		return false, err
	}
	return true, &RunError{Run: run, Err: errors.Join(ErrInterrupted, runctx.ErrInterrupted),
		Msg: "run " + string(run) + " was interrupted; it resumes from its last committed step"}
}
