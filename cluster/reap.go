package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// reap hands on the runs of workers that died: their running jobs are
// finalized and replaced by new ones in the same queues (so a late
// completion by a worker that was only paused touches nothing), and the
// worker is marked dead. Any live worker may do it; doing it twice is
// harmless (a job already replaced is not running).
//
// steady says this worker has reached the store without a break for a
// few heartbeats: only then does a peer's missing advisory lock (see
// lock.go) count as its death.
//
// A dead worker's jobs are those whose last attempt its River client made
// (WorkerInfo.Client): not those of a worker started again under its id.
// Only the reaper's own record is left alone (by its session): an earlier
// process under its name that died is reaped like any other.
func (c *Cluster) reap(ctx context.Context, me WorkerInfo, steady bool) error {
	self := me.ID
	ws, err := c.workers(ctx)
	if err != nil {
		return err
	}
	var held map[int64]bool
	if steady {
		if held, err = c.heldLocks(ctx); err != nil {
			return err
		}
	}
	now := time.Now()
	var dead []WorkerInfo
	for _, w := range ws {
		if w.Session == me.Session || (w.State != workerAlive && w.State != workerDraining) {
			continue
		}
		if w.Alive && c.sessionGone(w, held, now) {
			w.Alive, w.Why = false, "its database session ended (the lock it holds while it lives is gone)"
		}
		if !w.Alive {
			dead = append(dead, w)
		}
	}
	if len(dead) == 0 {
		return nil
	}
	jobs, err := c.q.running(ctx)
	if err != nil {
		return err
	}
	for _, d := range dead {
		var mine = jobs[:0:0]
		for _, j := range jobs {
			if n := len(j.AttemptedBy); n > 0 && j.AttemptedBy[n-1] == d.client() {
				mine = append(mine, j)
			}
		}
		why := fmt.Sprintf("worker %s died (%s); its runs were handed on by %s", d.ID, d.Why, self)
		ids, err := c.q.replace(ctx, mine, d.Session, why)
		if err != nil {
			return err
		}
		if err := c.setJobs(ctx, ids); err != nil {
			return err
		}
		d.State, d.Alive = workerDead, false
		d.Why = fmt.Sprintf("%s; taken for dead by %s at %s", d.Why, self, time.Now().UTC().Format(time.RFC3339Nano))
		b, _ := json.Marshal(d)
		if err := c.rt.Store.SetLabel(ctx, d.Session, LabelWorker, string(b)); err != nil {
			return err
		}
		// Its session failed is what the worker, if it wakes up, finds
		// (lost.go): its label it may overwrite with a late beat.
		if err := store.MoveTo(ctx, c.rt.Store, d.Session, store.StatusFailed); err != nil {
			return err
		}
		c.log.Warn("worker dead; runs handed on", "worker", d.ID, "why", d.Why, "jobs", len(mine), "new", ids)
	}
	return nil
}

// reroute routes the runs waiting for a worker that admits them
// (unroutable) when one has come, and enqueues again runs queued for a
// while without a live job (a submitter that died between committing a run
// and enqueueing it).
func (c *Cluster) reroute(ctx context.Context) error {
	st := c.rt.Store
	if err := c.releaseStranded(ctx); err != nil {
		return err
	}
	waiting, err := st.List(ctx, store.Filter{Labels: map[string]string{LabelState: string(StateUnroutable)}, Limit: 200})
	if err != nil {
		return err
	}
	var live []WorkerInfo
	if len(waiting) > 0 {
		if live, err = c.live(ctx, &c.cache); err != nil {
			return err
		}
	}
	pools := poolsOf(live)
	for _, info := range waiting {
		run, err := runOf(info)
		if err != nil || info.Labels[LabelCancel] != "" {
			continue
		}
		r := decide(pools, run.Workflow, run.Revision, run.Needs)
		if r.Queue == "" {
			continue
		}
		if err := c.routeWaiting(ctx, run, r); err != nil && !errors.Is(err, store.ErrFenced) {
			return err
		}
	}
	stale, err := st.List(ctx, store.Filter{Labels: map[string]string{LabelState: string(StateQueued)}, Until: time.Now().Add(-30 * time.Second), Limit: 200})
	if err != nil {
		return err
	}
	var orphans []*Run
	jobs := map[session.ID]int64{}
	for _, info := range stale {
		run, err := runOf(info)
		if err != nil || time.Since(run.Since) < 30*time.Second || run.Pool == "" {
			continue
		}
		orphans = append(orphans, run)
		if job, ok := jobOf(info, run); ok {
			jobs[run.ID] = job
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	alive, err := c.q.live(ctx, slices.Collect(maps.Values(jobs)))
	if err != nil {
		return err
	}
	for _, run := range orphans {
		if job, ok := jobs[run.ID]; ok && alive[job] {
			continue
		}
		if _, err := c.enqueue(ctx, run.ID, run.Pool); err != nil {
			return err
		}
		c.log.Warn("run was queued without a job; enqueued it", "run", run.ID)
	}
	return nil
}

// routeWaiting routes an unroutable run: the decision goes on its input if
// it never ran (nothing derives from the input yet), else on its ledger.
func (c *Cluster) routeWaiting(ctx context.Context, run *Run, r routing) error {
	st := c.rt.Store
	fctx, run, err := c.take(ctx, run.ID, StateUnroutable)
	if err != nil || run == nil {
		return err
	}
	ch := r.chunk("cluster.route")
	if run.Slices == 0 {
		in, err := st.Load(fctx, run.ID)
		if err != nil {
			return err
		}
		if err := st.Commit(fctx, in.Append(ch), in.Head()); err != nil {
			return err
		}
	} else if err := c.record(fctx, run, ch); err != nil {
		return err
	}
	run.Pool, run.Why = r.Queue, r.Reason
	if err := run.move(fctx, st, StateQueued); err != nil {
		return err
	}
	c.runEvent(ctx, run)
	_, err = c.enqueue(ctx, run.ID, r.Queue) // unfenced: a worker may take the job at once
	return err
}

// stuckAfter is how long a job this worker finished may still be running
// in the database before its completion is taken for lost.
const stuckAfter = 5 * time.Second

// unstick replaces this worker's own jobs that the database says are
// running though the worker finished them more than stuckAfter ago (and
// River never said it wrote their outcome): their completion was lost (the
// database went away as the slice ended), and nobody else would take them
// while this worker lives. (A job fetched but not yet started is not
// finished: a busy worker's backlog is left alone.)
//
// finished maps each job to the attempt the worker finished: a job running
// under a later attempt was fetched again (snoozed, then fetched while the
// worker is busy) and is not stuck.
func (c *Cluster) unstick(ctx context.Context, self string, finished map[int64]time.Time) error {
	if len(finished) == 0 {
		return nil
	}
	jobs, err := c.q.runningOf(ctx, slices.Collect(maps.Keys(finished)))
	if err != nil {
		return err
	}
	var stuck []*rivertype.JobRow
	for _, j := range jobs {
		n := len(j.AttemptedBy)
		if n > 0 && j.AttemptedBy[n-1] == self && j.AttemptedAt != nil && j.AttemptedAt.Equal(finished[j.ID]) {
			stuck = append(stuck, j)
		}
	}
	if len(stuck) == 0 {
		return nil
	}
	ids, err := c.q.replace(ctx, stuck, "", "worker "+self+" no longer held the run (its completion was lost)")
	if err == nil {
		err = c.setJobs(ctx, ids)
	}
	if err == nil {
		c.log.Warn("jobs left running without their worker; replaced", "worker", self, "jobs", len(stuck), "new", ids)
	}
	return err
}

// setJobs notes runs' new jobs.
func (c *Cluster) setJobs(ctx context.Context, ids map[string]int64) error {
	for run, id := range ids {
		if err := c.setJob(ctx, session.ID(run), id); err != nil {
			return err
		}
	}
	return nil
}

// take takes a run that is in state want: see takeIf.
func (c *Cluster) take(ctx context.Context, id session.ID, want State) (context.Context, *Run, error) {
	return c.takeIf(ctx, id, func(r *Run) bool { return r.State == want })
}

// takeIf takes a run only as it finds it: it reads the run and, if ok says
// so of it, advances its epoch from the one it read (store.AdvanceFrom),
// then reads it again under the new one. The run is nil (and nothing to
// do) if ok says no or someone took the run in between: a taker that
// finds the run moved on fences nobody out — a router that listed a run
// as unroutable a moment before a worker started it leaves that worker be.
// Every write the caller makes under the returned context fails if
// someone takes the run after it: of workers racing to move a run on, one
// does.
func (c *Cluster) takeIf(ctx context.Context, id session.ID, ok func(*Run) bool) (context.Context, *Run, error) {
	st := c.rt.Store
	info, err := st.Info(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	run, err := runOf(info)
	if err != nil {
		return nil, nil, err
	}
	if !ok(run) {
		return nil, nil, nil
	}
	epoch, err := store.AdvanceFrom(ctx, st, id, info.Epoch)
	if errors.Is(err, store.ErrFenced) {
		return nil, nil, nil // taken meanwhile
	}
	if err != nil {
		return nil, nil, err
	}
	if info, err = st.Info(ctx, id); err != nil {
		return nil, nil, err
	}
	if info.Epoch != epoch {
		return nil, nil, nil // taken since
	}
	if run, err = runOf(info); err != nil {
		return nil, nil, err
	}
	if !ok(run) {
		// Its holder at the epoch read moved it as it was taken.
		return nil, nil, nil
	}
	return store.WithFence(ctx, store.Fence{Session: id, Epoch: epoch}), run, nil
}

// takeInfo raises the run's epoch and reads the run under it (whoever
// advanced before has written what it did; whoever advances after fences
// this taker out); it returns ctx fenced by the new epoch. On PostgreSQL
// both go in one round trip.
func (c *Cluster) takeInfo(ctx context.Context, id session.ID) (context.Context, store.Info, error) {
	var info store.Info
	var err error
	if c.pg != nil {
		info, err = c.pg.AdvanceInfo(ctx, id)
	} else {
		var epoch int64
		if epoch, err = c.rt.Store.Advance(ctx, id); err == nil {
			if info, err = c.rt.Store.Info(ctx, id); err == nil && info.Epoch != epoch {
				err = fmt.Errorf("%w: run %s moved to epoch %d as it was taken at %d", store.ErrFenced, id, info.Epoch, epoch)
			}
		}
	}
	if err != nil {
		return nil, store.Info{}, err
	}
	return store.WithFence(ctx, store.Fence{Session: id, Epoch: info.Epoch}), info, nil
}
