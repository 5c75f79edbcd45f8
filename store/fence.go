package store

import (
	"context"
	"fmt"

	"github.com/openrath/rath/session"
)

// ErrFenced: a commit was made under a fence whose epoch is no longer the
// session's: a newer owner took the run over. It wraps ErrConflict, so a
// fenced-out writer is told what any writer losing a race is told.
var ErrFenced = fmt.Errorf("%w: fenced out by a newer epoch", ErrConflict)

// Fence is one owner's claim on a run. Every session has an epoch (0 when
// it is created); Advance raises it. A context carrying a Fence (WithFence)
// makes every Commit, SetStatus and SetLabel through it check, in the same
// transaction as the write, that Fence.Session's epoch is still
// Fence.Epoch; if it is not, the write fails with ErrFenced and stores
// nothing. The fence guards whichever session is written: a run's agents
// commit sessions of their own, all fenced by the run's input session.
//
// A worker that takes a run advances the epoch and works under the new
// one, so a worker that took it before — paused, partitioned, presumed
// dead — cannot commit once it wakes up.
type Fence struct {
	Session session.ID `json:"session"`
	Epoch   int64      `json:"epoch"`
}

type fenceKey struct{}

// WithFence returns ctx whose store writes are fenced by f.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceFrom returns the fence ctx carries, if any.
func FenceFrom(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}

// Check returns the error a write under f gets when the session's stored
// epoch is current: nil if they match, else ErrFenced naming both.
func (f Fence) Check(current int64) error {
	if current == f.Epoch {
		return nil
	}
	return fmt.Errorf("%w: run %s is at epoch %d, this writer holds %d", ErrFenced, f.Session, current, f.Epoch)
}

// Missing returns the error a write under f gets when f.Session is not
// stored at all: ErrFenced, since no owner can hold an epoch of it.
func (f Fence) Missing() error {
	return fmt.Errorf("%w: run %s is not stored", ErrFenced, f.Session)
}

// AdvanceFrom raises id's epoch from the one given to the next, or fails
// with ErrFenced, moving nothing, if someone advanced it since: the taker
// that read the session at epoch from and found it as it wants it takes it
// without fencing out whoever took it meanwhile.
func AdvanceFrom(ctx context.Context, st Store, id session.ID, from int64) (int64, error) {
	return st.Advance(WithFence(ctx, Fence{Session: id, Epoch: from}), id)
}

// AdvanceFence is the fence an Advance of id checks: ctx's, if it fences
// id itself.
func AdvanceFence(ctx context.Context, id session.ID) (Fence, bool) {
	f, ok := FenceFrom(ctx)
	return f, ok && f.Session == id
}
