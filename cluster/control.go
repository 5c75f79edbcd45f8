package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Labels of a cancel request: LabelCancel is "requested" (so workers can
// list them), LabelCancelBy says who asked and why.
const (
	LabelCancel   = "rath.cluster.cancel"
	LabelCancelBy = "rath.cluster.cancel.by"
)

var (
	// ErrFinal: the run is over (done, failed or cancelled).
	ErrFinal = errors.New("cluster: the run is over")
	// ErrNotWaiting: the run is not in the state the call settles.
	ErrNotWaiting = errors.New("cluster: the run is not waiting for that")
)

// Cancel asks for a run to stop. A run not being worked stops at once; a
// running one stops on whichever worker holds it within a heartbeat or
// two (Status shows it cancelling meanwhile). Either way a lifecycle note
// with who and why is appended to the run's ledger and the run ends
// cancelled; its sandbox is released with its agents.
func (c *Cluster) Cancel(ctx context.Context, id session.ID, by, reason string) error {
	run, err := loadRun(ctx, c.rt.Store, id)
	if err != nil {
		return err
	}
	if run.State.Final() {
		return fmt.Errorf("%w: %s is %s", ErrFinal, id, run.State)
	}
	who := by
	if reason != "" {
		who += ": " + reason
	}
	// Watchers (run event streams) show the run cancelling: reported.
	if err := c.rt.Store.SetLabels(store.WithLabelEvents(ctx), id, map[string]string{LabelCancelBy: who, LabelCancel: "requested"}); err != nil {
		return err
	}
	if info, err := c.rt.Store.Info(ctx, id); err == nil {
		if job, ok := jobOf(info, run); ok {
			if err := c.q.cancel(ctx, job); err != nil {
				return err
			}
		}
	}
	if run.State == StateRunning {
		return nil // its worker stops it
	}
	// Not being worked: stop it here, fencing out any worker that took it
	// meanwhile (it sees the request and stops too).
	fctx, info, err := c.takeInfo(ctx, id)
	if err != nil {
		return err
	}
	if run, err = runOf(info); err != nil || run.State.Final() {
		return err // it ended meanwhile
	}
	if err := c.finishCancel(fctx, run, who); !errors.Is(err, errCancelled) {
		return err
	}
	return nil
}

// jobOf is the run's current job: the one its last worker took, or the
// one inserted for it since (LabelJob), whichever is newer.
func jobOf(info store.Info, run *Run) (int64, bool) {
	var id int64
	if _, err := fmt.Sscan(info.Labels[LabelJob], &id); err != nil {
		id = 0
	}
	if run != nil && run.Job > id {
		id = run.Job
	}
	return id, id > 0
}

// errCancelled is what finishCancel returns once the run is cancelled.
var errCancelled = errors.New("cancelled")

// finishCancel ends a run as cancelled: a lifecycle note in its ledger,
// the state. It returns the error River cancels the job with, which wraps
// errCancelled; any other error is a failure to record the cancel.
func (c *Cluster) finishCancel(ctx context.Context, run *Run, who string) error {
	run.Cancel = who
	note := session.Note(fmt.Sprintf("lifecycle: run cancelled by %s at %s (was %s)", who, time.Now().UTC().Format(time.RFC3339), run.State))
	if err := c.record(ctx, run, note); err != nil {
		return err
	}
	if err := c.endSessions(ctx, run, StateCancelled); err != nil {
		return err
	}
	if err := run.move(ctx, c.rt.Store, StateCancelled); err != nil {
		return err
	}
	c.runEvent(ctx, run)
	c.ended(ctx, run)
	_ = store.MoveTo(ctx, c.rt.Store, run.ID, store.StatusFailed)
	c.log.Info("run cancelled", "run", run.ID, "by", who)
	return fmt.Errorf("cluster: run %s %w by %s", run.ID, errCancelled, who)
}

// Approve records a person's verdict on the approval a run waits for and
// enqueues its continuation (on PostgreSQL in the same transaction as the
// verdict's commit). A rejected run continues too: the workflow decides
// what a rejection means (usually it ends failed).
func (c *Cluster) Approve(ctx context.Context, id session.ID, approve bool, by, reason string) error {
	return c.ApproveAt(ctx, id, "", approve, by, reason)
}

// ReviewOptions settle a run in needs_review.
type ReviewOptions struct {
	// Verdict is session.VerdictHappened, VerdictNotHappened or
	// VerdictAborted.
	Verdict string
	// Result is what a call that happened returned, if known.
	Result string
	// CallID settles one call; empty settles every unsettled call alike.
	CallID string
	By     string
	Reason string
	// Force settles a call as not happened even though a worker that was
	// running it may still exist (ErrHolderMayExist): if it does, and
	// wakes up, the call's effect may happen twice. The review records
	// that it was forced, and over whom.
	Force bool
}

// Review settles the calls a run waits on (their effect unknown after their
// worker died): each gets a review chunk with who and why after its turn.
// Happened: the call is taken as done (with the given result); not
// happened: it runs again; aborted: the run ends failed. Then the run
// continues from where it stopped.
func (c *Cluster) Review(ctx context.Context, id session.ID, o ReviewOptions) error {
	st := c.rt.Store
	run, err := loadRun(ctx, st, id)
	if err != nil {
		return err
	}
	if run.State != StateNeedsReview || run.Review == nil {
		return fmt.Errorf("%w: %s is %s, not waiting for a review", ErrNotWaiting, id, run.State)
	}
	u := run.Review
	s, err := st.Load(ctx, u.Session)
	if err != nil {
		return fmt.Errorf("cluster: review %s: %w", id, err)
	}
	if s.Head() != u.Head {
		return fmt.Errorf("%w: review %s: session %s moved past the calls' turn", store.ErrConflict, id, u.Session)
	}
	var rs []agent.Review
	var rest []session.ToolCall
	for _, call := range u.Calls {
		if o.CallID != "" && call.ID != o.CallID {
			rest = append(rest, call)
			continue
		}
		rs = append(rs, agent.Review{CallID: call.ID, Verdict: o.Verdict, By: o.By, Reason: o.Reason, Result: o.Result})
	}
	if len(rs) == 0 {
		return fmt.Errorf("cluster: review %s: %s is not an unsettled call (unsettled: %s)", id, o.CallID, callIDs(u.Calls))
	}
	if len(rest) > 0 {
		return fmt.Errorf("cluster: review %s: settle every unsettled call (%s): %d remain; give no call id to settle all alike", id, callIDs(u.Calls), len(rest))
	}
	if o.Verdict == session.VerdictNotHappened {
		forced, err := c.holdersGone(ctx, run, o.Force)
		if err != nil {
			return fmt.Errorf("cluster: review %s: %w", id, err)
		}
		if forced != "" {
			for i := range rs {
				rs[i].Reason = strings.TrimSpace(rs[i].Reason + " [forced while " + forced + "]")
			}
		}
	}
	settled, err := agent.Settle(s, u.Node, u.Calls, rs...)
	if err != nil {
		return fmt.Errorf("cluster: review %s: %w", id, err)
	}
	if o.Verdict == session.VerdictAborted {
		fctx, fresh, err := c.take(ctx, id, StateNeedsReview)
		if err != nil {
			return err
		}
		if fresh == nil {
			return fmt.Errorf("%w: %s moved on meanwhile", ErrNotWaiting, id)
		}
		run = fresh
		if err := st.Commit(fctx, settled, u.Head); err != nil {
			return err
		}
		run.Review, run.Displaced = nil, nil
		note := session.Note(fmt.Sprintf("lifecycle: run aborted by review of %s (%s): %s", o.By, callIDs(u.Calls), o.Reason))
		if err := c.record(fctx, run, note); err != nil {
			return err
		}
		return c.fail(fctx, run, nil, fmt.Errorf("%w: %s by %s: %s", agent.ErrAborted, callIDs(u.Calls), o.By, o.Reason))
	}
	return c.continueWith(ctx, run, settled, u.Head)
}

// callIDs names calls for messages: ["tool id", ...].
func callIDs(calls []session.ToolCall) string {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.Name + " " + c.ID
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// continueWith commits s (a verdict appended to a stopped run's session
// whose head was prev) and enqueues the run's continuation in a pool
// serving its revision — in one transaction on PostgreSQL. With no such
// pool alive the run waits, unroutable, until one is.
func (c *Cluster) continueWith(ctx context.Context, run *Run, s *session.Session, prev session.ChunkID) error {
	st := c.rt.Store
	fctx, fresh, err := c.take(ctx, run.ID, run.State)
	if err != nil {
		return err
	}
	if fresh == nil {
		return fmt.Errorf("%w: %s moved on meanwhile", ErrNotWaiting, run.ID)
	}
	run = fresh
	run.Review, run.Displaced = nil, nil // settled, if it waited for one
	live, err := c.live(ctx, &c.cache)
	if err != nil {
		return err
	}
	r := decide(poolsOf(live), run.Workflow, run.Revision, run.Needs)
	run.Pool, run.Why, run.Error = r.Queue, r.Reason, ""
	if r.Queue == "" {
		if err := st.Commit(fctx, s, prev); err != nil {
			return err
		}
		if err := run.move(fctx, st, StateUnroutable); err != nil {
			return err
		}
		c.runEvent(ctx, run)
		return nil
	}
	if c.pg != nil {
		run.State, run.Since = StateQueued, time.Now().UTC()
		labels, err := run.labels()
		if err != nil {
			return err
		}
		if _, err = commitAndEnqueuePG(fctx, c.q, c.pg, commitJob{s: s, prev: prev, run: string(run.ID), queue: r.Queue, labels: labels}); err != nil {
			return err
		}
		c.runEvent(ctx, run)
		return nil
	}
	if err := run.move(fctx, st, StateQueued); err != nil {
		return err
	}
	if err := st.Commit(fctx, s, prev); err != nil {
		return err
	}
	c.runEvent(ctx, run)
	_, err = c.enqueue(ctx, run.ID, r.Queue) // unfenced: a worker may take the job at once
	return err
}

// commitJob is a session commit, the job to insert with it, and the
// labels to set on the run with them (its job's id added).
type commitJob struct {
	s      *session.Session
	prev   session.ChunkID
	run    string
	queue  string
	labels map[string]string
}
