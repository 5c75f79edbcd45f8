package rath

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ownership is this process's hold on a run: its lock, and the fencing
// epoch it writes under.
type ownership struct {
	run  session.ID
	lock runLock
	// fence writes under the run's epoch (for what is written after the
	// run ended); ctx is the run's own context, fenced too, which ends if
	// the lock is lost to another process.
	fence  context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// own makes this process the owner of run, whose lock it holds: it raises
// the run's fencing epoch (so a process that owned it before can write
// nothing more), records itself as the owner with labels, and marks the
// run active. On failure the lock is released.
func (r *Runtime) own(ctx context.Context, run session.ID, lk runLock, labels map[string]string) (*ownership, error) {
	epoch, err := r.Store.Advance(ctx, run)
	if err != nil {
		return nil, errors.Join(err, lk.release())
	}
	rec := lk.record()
	rec.Host, rec.PID, rec.Epoch = hostname(), os.Getpid(), epoch
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, errors.Join(err, lk.release())
	}
	all := map[string]string{OwnerLabel: string(b)}
	for k, v := range labels {
		all[k] = v
	}
	fence := store.WithFence(ctx, store.Fence{Session: run, Epoch: epoch})
	if err := r.Store.SetLabels(fence, run, all); err != nil {
		return nil, errors.Join(err, lk.release())
	}
	if err := store.MoveTo(fence, r.Store, run, store.StatusActive); err != nil {
		return nil, errors.Join(err, lk.release())
	}
	if pl, ok := lk.(*pgLock); ok {
		pl.onRelock(func(since time.Time) {
			rec.Since = since
			if b, err := json.Marshal(rec); err == nil {
				_ = r.Store.SetLabel(fence, run, OwnerLabel, string(b))
			}
		})
	}
	o := &ownership{run: run, lock: lk, fence: fence}
	o.ctx, o.cancel = context.WithCancelCause(fence)
	if lost := lk.lost(); lost != nil {
		go func() {
			select {
			case <-lost:
				o.cancel(ErrOwnerLost)
			case <-o.ctx.Done():
			}
		}()
	}
	return o, nil
}

// finish records how the run ended — its output and its input closed, or
// failed with err — and gives the run up. A process that lost the run to
// another writes nothing (its fence is stale). The output comes back with
// the error.
func (r *Runtime) finish(o *ownership, name string, out *session.Session, err error) (*session.Session, error) {
	if errors.Is(context.Cause(o.ctx), ErrOwnerLost) {
		err = errors.Join(err, ErrOwnerLost)
	}
	o.cancel(nil)
	var u *agent.Unsettled
	if errors.As(err, &u) {
		// It waits for a person, unfinished: Review, then Resume.
		r.keepRemote()
		rerr := r.needsReview(ctx0(o), o.run, u, err)
		return out, errors.Join(rerr, o.lock.release())
	}
	if stopped, ierr := interrupted(o.run, err); stopped {
		// Unfinished: its sessions stay as they are, and with its owner
		// gone the run is shown interrupted, for Resume.
		r.keepRemote()
		if rerr := o.lock.release(); rerr != nil {
			ierr = errors.Join(ierr, rerr)
		}
		return out, ierr
	}
	// The end is written even when the run ended because its context did.
	ctx := context.WithoutCancel(o.fence)
	status := store.StatusClosed
	if err != nil {
		status = store.StatusFailed
	}
	if out != nil {
		if err != nil {
			// flow.Run labelled the output only if it committed it (a
			// run that stopped did not); try here.
			_ = r.Store.SetLabel(ctx, out.ID(), WorkflowLabel, name)
		}
		if serr := store.MoveTo(ctx, r.Store, out.ID(), status); serr != nil && err == nil {
			err = serr
		}
	}
	// A run that ended ends its sessions too, before its input says so.
	if status == store.StatusClosed || status == store.StatusFailed {
		if serr := r.endSessions(ctx, o.run, status); serr != nil && err == nil {
			err = serr
		}
	}
	if serr := store.MoveTo(ctx, r.Store, o.run, status); serr != nil && err == nil {
		err = serr
	}
	if rerr := o.lock.release(); rerr != nil && err == nil {
		err = rerr
	}
	return out, err
}

// inputLabel is the label value recording a run's input text (JSON, so
// that an empty text is recorded too).
func inputLabel(text *string) string {
	if text == nil {
		return ""
	}
	b, _ := json.Marshal(*text)
	return string(b)
}

// commitNew commits s unless the store holds it at this head already.
func commitNew(ctx context.Context, st store.Store, s *session.Session) error {
	prev := session.ChunkID("")
	if info, err := st.Info(ctx, s.ID()); err == nil {
		if info.Head == s.Head() {
			return nil
		}
		prev = info.Head
	}
	return st.Commit(ctx, s, prev)
}

// ctx0 is the context an ownership writes its run's last words in: fenced,
// and not cancelled with the run.
func ctx0(o *ownership) context.Context { return context.WithoutCancel(o.fence) }

// keepRemote has the runtime's Close leave the remote sandboxes its pool
// created, when a run stopped unfinished: Resume, maybe in another
// process, reattaches them, as after a crash (whose process releases
// nothing). Their lifetimes end them if no Resume comes.
func (r *Runtime) keepRemote() {
	if r.Sandboxes != nil {
		r.Sandboxes.KeepRemote()
	}
}
