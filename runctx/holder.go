package runctx

import (
	"context"
	"errors"
)

// ErrNotHolder: the process working a run no longer holds it (another took
// it over, or it was taken for dead): a call whose effect must not happen
// twice is not started, and nothing more is recorded. The run's holder,
// whoever it is now, goes on from the record.
var ErrNotHolder = errors.New("runctx: this process no longer holds the run")

type holderKey struct{}

// WithHolderCheck returns ctx in which an agent calls check right before
// each call to a tool that is not idempotent starts, and starts it only if
// check returns nil; an error (wrapping ErrNotHolder when the run was
// lost, anything else when it could not be told) stops the run there, the
// call not started. A run worked by one process among many (the cluster)
// checks in it that its claim on the run is still current, so that a
// process paused past its takeover starts no effect once it wakes up.
func WithHolderCheck(ctx context.Context, check func(context.Context) error) context.Context {
	return context.WithValue(ctx, holderKey{}, check)
}

// CheckHolder calls the check ctx carries (nil if none).
func CheckHolder(ctx context.Context) error {
	check, _ := ctx.Value(holderKey{}).(func(context.Context) error)
	if check == nil {
		return nil
	}
	return check(ctx)
}
