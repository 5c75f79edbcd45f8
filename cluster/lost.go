package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A worker that lost a run — another took it over (its fencing epoch
// moved), or the cluster took the worker for dead and handed its runs on —
// stops working it at once: the run's in-flight calls are cancelled, it
// commits nothing more, and it starts no call to a tool that is not
// idempotent without checking, right before, that it still holds the run
// (runctx.WithHolderCheck). A worker taken for dead (it was paused or cut
// off past DeadAfter) finds out on its next heartbeat, stops every run it
// held and exits, rather than work on beside the workers its runs went to.

// ErrTakenForDead: the cluster took this worker for dead and handed its
// runs on; it stops.
var ErrTakenForDead = errors.New("cluster: this worker was taken for dead and its runs handed on")

// errUnchecked: whether the worker still holds a run could not be told
// (the store is away), so the call was not started; the slice ends with
// an error and River retries it later.
var errUnchecked = errors.New("cluster: cannot tell whether this worker still holds the run")

// confirm reads the worker's own record: if the cluster took it for dead
// (its session failed, its state dead), the worker loses every run it
// holds and confirm returns ErrTakenForDead.
func (w *Worker) confirm(ctx context.Context) error {
	if w.dead.Load() {
		return ErrTakenForDead
	}
	info, err := w.hb.Info(ctx, w.info.Session)
	if err != nil {
		return err
	}
	var rec WorkerInfo
	_ = json.Unmarshal([]byte(info.Labels[LabelWorker]), &rec)
	if info.Status != store.StatusFailed && rec.State != workerDead {
		return nil
	}
	why := rec.Why
	if why == "" {
		why = "its session was marked failed"
	}
	w.loseAll(why)
	return ErrTakenForDead
}

// loseAll stops every run the worker holds, once: the worker was taken
// for dead.
func (w *Worker) loseAll(why string) {
	if w.dead.Swap(true) {
		return
	}
	w.mu.Lock()
	n := len(w.held)
	for _, h := range w.held {
		h.lose()
	}
	w.mu.Unlock()
	w.c.log.Error("taken for dead by the cluster: stopping the calls of the runs it held, and the worker", "worker", w.info.ID, "why", why, "runs", n)
	close(w.gone)
}

// lose stops the run: its calls are cancelled and its commits refused.
func (h *hold) lose() {
	h.lost.Store(true)
	h.cancel()
}

// holds is the holder check of run id, taken at epoch under hold h: the
// worker is not taken for dead, its database session holds its lock, and
// the run's epoch is still the one it took.
func (w *Worker) holds(id session.ID, epoch int64, h *hold) func(context.Context) error {
	return func(ctx context.Context) error {
		if h.lost.Load() {
			return fmt.Errorf("%w: run %s was lost", runctx.ErrNotHolder, id)
		}
		if w.lock != nil {
			if err := w.lock.hold(ctx); err != nil {
				return fmt.Errorf("%w: its lock: %w", errUnchecked, err)
			}
		}
		if err := w.confirm(ctx); errors.Is(err, ErrTakenForDead) {
			return fmt.Errorf("%w: %w", runctx.ErrNotHolder, err)
		} else if err != nil {
			return fmt.Errorf("%w: %w", errUnchecked, err)
		}
		info, err := w.c.rt.Store.Info(ctx, id)
		if err != nil {
			return fmt.Errorf("%w: %w", errUnchecked, err)
		}
		if err := (store.Fence{Session: id, Epoch: epoch}).Check(info.Epoch); err != nil {
			h.lose()
			return fmt.Errorf("%w: %w", runctx.ErrNotHolder, err)
		}
		return nil
	}
}

// heldStore is the store a run commits through on a worker: once the run
// is lost, its commits are refused (a call cancelled as the run was lost
// must not record an outcome it does not know).
type heldStore struct {
	store.Store
	h *hold
}

func (s heldStore) Commit(ctx context.Context, sess *session.Session, prev session.ChunkID) error {
	if s.h.lost.Load() {
		return fmt.Errorf("%w: session %s not committed", runctx.ErrNotHolder, sess.ID())
	}
	return s.Store.Commit(ctx, sess, prev)
}
