package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ErrNotResumable: Resume takes back to work only a run that ended failed
// or cancelled. The error for a done run also wraps ErrFinal; the one for
// a run not over yet (queued, running, waiting...) also wraps
// ErrNotWaiting, so that the two can be told apart.
var ErrNotResumable = errors.New("cluster: the run cannot be resumed")

// Resume takes a run that ended failed or cancelled back to work from its
// committed steps: its error and cancel request are cleared, a lifecycle
// note saying who resumed it and what it was goes on its ledger, its input
// session is active again if the cancel had marked it failed, and it is
// routed and enqueued as a new run is (or waits, unroutable, until a
// worker that serves its revision and needs is alive). Its next slice
// replays the committed steps and runs only the rest; the output of the
// attempt that failed stays failed, the record of that attempt, and the
// run writes its output anew. On PostgreSQL the note, the job and the
// run's record go in one transaction when the run has a ledger already.
//
// The replay stops where the record does: a run whose agent recorded its
// failure (an error chunk: a model call that failed, a cancel that reached
// a running call) diverges there and ends failed again, with nothing
// repeated, until replay steps past such a record.
//
// A done run, or one not over yet, is refused with an error wrapping
// ErrNotResumable; a session that is no run with ErrNotARun.
func (c *Cluster) Resume(ctx context.Context, id session.ID, by, reason string) error {
	run, err := loadRun(ctx, c.rt.Store, id)
	if err != nil {
		return err
	}
	if err := resumable(run); err != nil {
		return err
	}
	if run.Session != "" {
		// Runs on a session go one at a time: it may have to wait.
		unlock, err := c.lockSession(ctx, run.Session)
		if err != nil {
			return err
		}
		defer unlock()
	}
	// Take it (a new epoch) only as it is known to be over: taking a
	// running run would fence its worker out.
	fctx, fresh, err := c.takeIf(ctx, id, func(r *Run) bool { return resumable(r) == nil })
	if err != nil {
		return err
	}
	if fresh == nil {
		// It moved on meanwhile (resumed by someone else).
		if run, err = loadRun(ctx, c.rt.Store, id); err != nil {
			return err
		}
		if err := resumable(run); err != nil {
			return err
		}
		return fmt.Errorf("%w: %s: %w: it was taken meanwhile", ErrNotResumable, id, ErrNotWaiting)
	}
	run = fresh
	info, err := c.rt.Store.Info(fctx, id)
	if err != nil {
		return err
	}
	if info.Status == store.StatusFailed {
		// Cancelled: its input was marked failed; it works again.
		if err := store.MoveTo(fctx, c.rt.Store, id, store.StatusActive); err != nil {
			return fmt.Errorf("cluster: resume %s: %w", id, err)
		}
	}
	note := session.Note(fmt.Sprintf("lifecycle: run resumed by %s at %s (was %s)",
		resumer(by, reason), time.Now().UTC().Format(time.RFC3339), endOf(run)))
	run.Error, run.Cancel, run.Review = "", "", nil
	if run.Session != "" {
		last, err := c.lastOpen(ctx, run.Session)
		if err != nil {
			return err
		}
		if last != nil {
			return c.resumeBehind(ctx, fctx, run, note, last)
		}
	}
	live, err := c.live(ctx, &c.cache)
	if err != nil {
		return err
	}
	if err := c.requeue(ctx, fctx, run, note, decide(poolsOf(live), run.Workflow, run.Revision, run.Needs)); err != nil {
		return err
	}
	c.log.Info("run resumed", "run", id, "by", by, "pool", run.Pool)
	return nil
}

// resumable says why run cannot be resumed, if it cannot.
func resumable(run *Run) error {
	switch {
	case run.State == StateFailed || run.State == StateCancelled:
		return nil
	case run.State == StateDone:
		return &resumeError{msg: fmt.Sprintf("cluster: run %s is done: only a failed or cancelled run can be resumed", run.ID),
			kinds: []error{ErrNotResumable, ErrFinal}}
	}
	return &resumeError{msg: fmt.Sprintf("cluster: run %s is %s, not over: only a failed or cancelled run can be resumed", run.ID, run.State),
		kinds: []error{ErrNotResumable, ErrNotWaiting}}
}

// resumeError is a refused Resume: its own message, and the sentinels it
// is (errors.Is).
type resumeError struct {
	msg   string
	kinds []error
}

func (e *resumeError) Error() string   { return e.msg }
func (e *resumeError) Unwrap() []error { return e.kinds }

// resumer says who resumes a run, and why, for its ledger.
func resumer(by, reason string) string {
	who := by
	if who == "" {
		who = "an unnamed caller"
	}
	if reason != "" {
		who += ": " + reason
	}
	return who
}

// endOf says how a run ended, for the note of its resumption.
func endOf(run *Run) string {
	switch {
	case run.State == StateCancelled && run.Cancel != "":
		return "cancelled by " + run.Cancel
	case run.Error != "":
		return string(run.State) + ": " + run.Error
	}
	return string(run.State)
}

// requeue notes run's resumption on its ledger, clears its cancel request
// and queues it in the pool r chose — or leaves it unroutable, saying why,
// when r chose none. Writes go under fctx's fence; the job is inserted
// unfenced (a worker may take it at once), except on PostgreSQL, where a
// run with a ledger gets the note, its job and its record in one
// transaction.
func (c *Cluster) requeue(ctx, fctx context.Context, run *Run, note session.Chunk, r routing) error {
	st := c.rt.Store
	run.Pool, run.Why = r.Queue, r.Reason
	uncancel := []string{LabelCancel, "", LabelCancelBy, ""}
	if r.Queue != "" && c.pg != nil && run.Ledger != "" {
		return c.requeuePG(fctx, run, note, r.Queue, uncancel)
	}
	if err := c.record(fctx, run, note); err != nil {
		return err
	}
	state := StateQueued
	if r.Queue == "" {
		state = StateUnroutable
	}
	run.State, run.Since = state, time.Now().UTC()
	if err := run.save(fctx, st, uncancel...); err != nil {
		return err
	}
	c.runEvent(ctx, run)
	if r.Queue == "" {
		return nil
	}
	_, err := c.enqueue(ctx, run.ID, r.Queue)
	return err
}

// requeuePG commits the note on the run's ledger, inserts its job in queue
// and saves its record as queued (with also's labels), in one transaction.
func (c *Cluster) requeuePG(fctx context.Context, run *Run, note session.Chunk, queue string, also []string) error {
	ledger, err := c.rt.Store.Load(fctx, run.Ledger)
	if err != nil {
		return fmt.Errorf("cluster: ledger of %s: %w", run.ID, err)
	}
	run.State, run.Since = StateQueued, time.Now().UTC()
	labels, err := run.labels(also...)
	if err != nil {
		return err
	}
	if _, err = commitAndEnqueuePG(fctx, c.q, c.pg, commitJob{s: ledger.Append(note), prev: ledger.Head(), run: string(run.ID), queue: queue, labels: labels}); err != nil {
		return err
	}
	c.runEvent(fctx, run)
	return nil
}
