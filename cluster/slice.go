package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// gate bounds a slice: the first live model call always runs; later ones
// until the step or time budget is spent or the worker drains. The time
// budget is SliceTime, or startupShare times what the slice took to start
// (from its job's start to its first live call: taking the run, building
// its workflow, replaying its committed steps), whichever is longer: under
// a load that slows everything, slices lengthen rather than spend
// themselves starting (a yielded run waits behind the queue, then starts
// again).
type gate struct {
	n        atomic.Int64
	max      int64
	start    time.Time     // the slice's start
	budget   time.Duration // SliceTime
	deadline atomic.Int64  // Unix ns; set at the first call
	drain    *atomic.Bool
}

// startupShare is how many times its start-up a slice works, at least,
// before it yields on time.
const startupShare = 10

func newGate(start time.Time, steps int, budget time.Duration, drain *atomic.Bool) *gate {
	g := &gate{max: int64(steps), start: start, budget: budget, drain: drain}
	g.deadline.Store(start.Add(budget).UnixNano())
	return g
}

func (g *gate) more() bool {
	k := g.n.Add(1)
	if k == 1 {
		now := time.Now()
		g.deadline.Store(now.Add(max(g.budget, startupShare*now.Sub(g.start))).UnixNano())
		return true
	}
	return !g.drain.Load() && k <= g.max && time.Now().UnixNano() < g.deadline.Load()
}

// hostLocal are the sandbox backends whose workspaces live on one host.
var hostLocal = map[string]bool{"local": true, "bwrap": true, "docker": true}

// work runs one slice of a run: it takes the run (a new fencing epoch),
// records who took it and why when the worker changes, resumes the run from
// its committed steps until the slice ends, and settles what came of it.
//
// from is the worker the job was taken from as it was taken for dead, if
// it replaces a dead worker's.
func (w *Worker) work(ctx context.Context, jobID int64, queue string, id session.ID, from session.ID) error {
	began := time.Now()
	st := w.c.rt.Store
	ctx, cancel := context.WithCancel(ctx)
	h := &hold{cancel: cancel}
	w.mu.Lock()
	w.held[id] = h
	w.mu.Unlock()
	defer func() {
		cancel()
		w.mu.Lock()
		delete(w.held, id)
		w.mu.Unlock()
	}()
	// Take the run first (a new epoch), then read it under that epoch:
	// whoever advanced before us has written what it did; whoever advances
	// after fences us out. (A run has one live job, so taking it displaces
	// no rightful owner, even when this worker then leaves it to others.)
	fctx, info, err := w.c.takeInfo(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return w.lost(err) // fenced: someone took it meanwhile; else the store: River retries later
	}
	run, err := runOf(info)
	if err != nil {
		return river.JobCancel(err)
	}
	epoch := info.Epoch
	if run.State.Final() {
		return nil
	}
	if info.Labels[LabelCancel] == "requested" {
		return river.JobCancel(w.c.finishCancel(fctx, run, info.Labels[LabelCancelBy]))
	}
	wf, err := rath.LookupWorkflow(run.Workflow)
	if err != nil {
		return river.JobCancel(err)
	}
	rev := revisionOf(wf)
	if run.Revision != "" && run.Revision != rev {
		// Routing sends a run only to workers of its revision; a worker of
		// another build sharing the pool leaves it to them.
		return river.JobSnooze(time.Second)
	}
	if run.State == StateWaitingApproval || run.State == StateNeedsReview || run.State == StateUnroutable || run.State == StateBehind {
		// A duplicate job of a run that waits for a person, a worker or
		// an earlier run.
		return nil
	}
	quota, wait, started, err := w.c.quotaWait(fctx, run)
	if err != nil {
		return w.lost(err)
	}
	defer started()
	if wait > 0 {
		return river.JobSnooze(wait) // over its scope's quota: it waits, queued
	}
	moved := ""
	if run.Host != "" && run.Host != w.c.host {
		if moved, err = w.move(ctx, fctx, run); moved == "" {
			return err
		}
	}
	d := w.displaced(ctx, run, from)
	why := w.takeReason(run, d)
	if moved != "" {
		why += "; " + moved
	}
	if d != nil {
		run.displace(d.Holder) // taken for dead while it held the run: it may only be paused
	}
	prev := run.Worker
	self := w.holder()
	run.Worker, run.Holder, run.Pool, run.Slices, run.Error = w.info.ID, &self, queue, run.Slices+1, ""
	if run.Revision == "" {
		run.Revision = rev
	}
	var in *session.Session // the input, read on the first slice
	if run.Slices == 1 {
		if in, err = st.Load(ctx, id); err != nil {
			return err
		}
		w.pin(run, in)
	}
	if prev != w.info.ID || why != "" {
		if why == "" {
			why = "continues the run"
		}
		ch := session.Of(&session.Decision{Selector: "cluster.worker",
			Candidates: []session.Candidate{{Name: w.info.ID, Description: fmt.Sprintf("host %s pid %d, pool %s", w.info.Host, w.info.PID, queue)}},
			Choice:     w.info.ID, Reason: fmt.Sprintf("%s %s at epoch %d (slice %d, revision %s)", w.info.ID, why, epoch, run.Slices, run.Revision)}).
			WithTier(session.TierDurable)
		if in, err = w.c.note(fctx, run, in, ch); err != nil {
			return w.lost(err)
		}
	}
	run.Job = jobID
	err = run.move(fctx, st, StateRunning)
	started()
	if err != nil {
		return w.lost(err)
	}
	w.c.runEvent(ctx, run)

	// A call to a tool that is not idempotent starts only while the worker
	// still holds the run (lost.go).
	sctx := runctx.WithHolderCheck(fctx, w.holds(id, epoch, h))
	g := newGate(began, w.c.opts.SliceSteps, w.c.opts.SliceTime, &w.draining)
	sctx = runctx.WithSlice(runctx.WithRecordedVerdicts(runctx.WithReview(sctx)), g.more)
	sctx = flow.WithOutputLabels(sctx, map[string]string{rath.WorkflowLabel: run.Workflow})
	sctx = runctx.WithWorkspaceJournal(sctx, w.c.newJournal(id))
	// The run's policies, quotas and memory are its scope's.
	sctx = runctx.WithScope(sctx, store.Scope{Tenant: run.Tenant, Project: run.Project})
	sctx = w.c.withPolicy(sctx)
	sctx, endDeltas := w.c.withDeltas(sctx, id)
	defer endDeltas()
	bctx := sctx
	if run.Input != nil {
		bctx = rath.WithInput(sctx, *run.Input)
	}
	m, _, err := wf.Build(bctx, w.c.rt)
	if err != nil {
		return w.c.fail(fctx, run, nil, fmt.Errorf("build %s: %w", run.Workflow, err))
	}
	var out *session.Session
	// What the run commits through: nothing once it is lost; observed, if
	// the worker has metrics.
	var rst store.Store = heldStore{Store: st, h: h}
	if w.metrics != nil {
		rst = w.metrics.Observe(rst)
	}
	if quota.TokensPerDay > 0 || quota.CostPerDay > 0 {
		// Its scope's model use is counted, for its daily quotas.
		key := usageLabel(run.Scope(), began)
		rst = meter(rst, began, func(u session.Usage) { w.usage.add(key, u) })
		defer func() {
			if err := st.SetLabels(context.WithoutCancel(ctx), w.info.Session, w.usage.labels(key)); err != nil {
				w.c.log.Warn("usage: record", "worker", w.info.ID, "err", err)
			}
		}()
	}
	if run.Slices == 1 {
		// Nothing ran yet (a slice that ran saved its count first): run
		// from the input, with nothing to resume from.
		out, err = flow.Run(sctx, rst, m, in)
	} else {
		out, err = replay.Resume(sctx, m, rst, id)
	}
	endDeltas() // published before the run moves on, so streams have them before its end

	if h.lost.Load() {
		// Lost meanwhile: this slice writes nothing, and whoever holds the
		// run next goes on from the record.
		w.c.log.Warn("run lost: its calls were stopped, nothing more recorded", "run", id, "worker", w.info.ID, "err", err)
		if w.dead.Load() {
			// Taken for dead: the job goes back to the queue — unless it
			// was replaced already (finalized, so this touches nothing). A
			// job this worker fetched as it woke was not.
			return river.JobSnooze(0)
		}
		return nil // taken over: the taker holds the run's job
	}
	if err != nil || h.cancelled.Load() {
		// Stopped by a cancel: from this worker's poll of the store, or
		// from River reaching the job (rath cancel cancels it too).
		bg := context.WithoutCancel(ctx)
		if info, ierr := st.Info(bg, id); ierr == nil && info.Labels[LabelCancel] == "requested" {
			return river.JobCancel(w.c.finishCancel(context.WithoutCancel(fctx), run, info.Labels[LabelCancelBy]))
		}
	}
	return w.settle(ctx, fctx, run, out, err)
}

// takeReason says why this worker takes the run, when it is news: the
// first slice, a takeover from a dead worker, a continuation after a
// person's verdict.
func (w *Worker) takeReason(run *Run, d *displacedHolder) string {
	switch {
	case run.Slices == 0:
		return "starts the run"
	case d != nil:
		return fmt.Sprintf("takes the run over from %s (host %s, pid %d; %s)", d.Worker, d.Host, d.PID, d.why)
	case run.State == StateRunning && run.Worker != w.info.ID:
		return "takes the run over from " + run.Worker + " (it stopped answering)"
	case run.Worker != w.info.ID:
		return "continues the run after " + run.Worker
	}
	return ""
}

// holder is the worker's holder record.
func (w *Worker) holder() Holder {
	w.mu.Lock()
	defer w.mu.Unlock()
	return holderOf(w.info)
}

// pin notes, on its first slice, where a run is placed. A run on a
// host-local sandbox is pinned: its workspace lives on this host, so only
// workers here continue it. A remote sandbox (e2b, cube, opensandbox)
// lives with its provider, and any worker reaches it.
func (w *Worker) pin(run *Run, in *session.Session) {
	if run.Slices != 1 {
		return
	}
	b := in.Placement().Backend
	run.Placed = b
	if hostLocal[b] {
		run.Host = w.c.host
		run.Pinned = pinReason(b, w.c.host)
	}
}

// lost ends a job whose writes were fenced out: a newer owner holds the
// run (through another job, or this one's replacement), so this job just
// ends — its row is finalized already when it was replaced. Other errors
// are returned for River to retry.
func (w *Worker) lost(err error) error {
	if errors.Is(err, store.ErrFenced) {
		w.c.log.Warn("fenced out: another worker holds the run", "worker", w.info.ID, "err", err)
		return nil
	}
	return err
}

// settle records what a slice came to and tells River what to do with the
// job.
func (w *Worker) settle(ctx, fctx context.Context, run *Run, out *session.Session, err error) error {
	st := w.c.rt.Store
	var u *agent.Unsettled
	switch {
	case err == nil:
		run.Output = out.ID() // labelled with the workflow by flow.Run
		if serr := store.MoveTo(fctx, st, out.ID(), store.StatusClosed); serr != nil {
			return w.lost(serr)
		}
		if eerr := w.c.endSessions(fctx, run, StateDone); eerr != nil {
			return w.lost(eerr)
		}
		if merr := run.move(fctx, st, StateDone); merr != nil {
			return w.lost(merr)
		}
		w.c.runEvent(ctx, run)
		w.c.ended(fctx, run)
		w.c.log.Info("run done", "run", run.ID, "worker", w.info.ID, "output", out.ID())
		return nil
	case errors.Is(err, runctx.ErrYielded):
		if merr := run.move(fctx, st, StateQueued); merr != nil {
			return w.lost(merr)
		}
		return river.JobSnooze(0)
	case errors.As(err, &u):
		run.Review = u
		if merr := run.move(fctx, st, StateNeedsReview); merr != nil {
			return w.lost(merr)
		}
		w.c.runEvent(ctx, run)
		w.c.parkRemote(fctx, run)
		w.c.log.Warn("run needs review", "run", run.ID, "err", err)
		return nil
	case errors.Is(err, flow.ErrPaused) || errors.Is(err, agent.ErrPaused):
		if out != nil {
			run.Output = out.ID()
		}
		run.Error = err.Error()
		if merr := run.move(fctx, st, StateWaitingApproval); merr != nil {
			return w.lost(merr)
		}
		w.c.runEvent(ctx, run)
		w.c.parkRemote(fctx, run)
		return nil
	case errors.Is(err, store.ErrFenced):
		return w.lost(err)
	case errors.Is(err, errUnchecked):
		// A call was not started: whether the worker still holds the run
		// could not be told. River tries the slice again.
		return err
	case errors.Is(err, runctx.ErrNotHolder) && w.dead.Load():
		// Taken for dead: a reaper that listed this worker's jobs
		// before this one was fetched did not replace it, so the job
		// goes back to the queue for another worker (if the reaper did
		// replace it, the job is finalized and this changes nothing).
		// Completed, it would leave the run running with no job.
		w.c.log.Warn("run given back: this worker was taken for dead", "run", run.ID, "worker", w.info.ID, "err", err)
		return river.JobSnooze(0)
	case errors.Is(err, runctx.ErrNotHolder):
		w.c.log.Warn("run lost before a call started: another worker holds it", "run", run.ID, "worker", w.info.ID, "err", err)
		return nil
	case ctx.Err() != nil:
		// The worker is stopping hard: the run goes back to the queue.
		return river.JobSnooze(0)
	}
	if _, perr := st.Info(ctx, run.ID); perr != nil {
		// The store is away: the run is not failed, it waits for it.
		return fmt.Errorf("cluster: run %s: %w (store: %v)", run.ID, err, perr)
	}
	return w.c.fail(fctx, run, out, err)
}

// fail marks the run failed: its workflow ended with err.
func (c *Cluster) fail(ctx context.Context, run *Run, out *session.Session, err error) error {
	run.Error = err.Error()
	if out != nil {
		run.Output = out.ID()
		_ = c.rt.Store.SetLabel(ctx, out.ID(), rath.WorkflowLabel, run.Workflow)
		_ = store.MoveTo(ctx, c.rt.Store, out.ID(), store.StatusFailed)
	}
	if eerr := c.endSessions(ctx, run, StateFailed); eerr != nil {
		return eerr
	}
	if merr := run.move(ctx, c.rt.Store, StateFailed); merr != nil {
		return merr
	}
	c.runEvent(ctx, run)
	c.ended(ctx, run)
	c.log.Warn("run failed", "run", run.ID, "err", err)
	return nil
}

// pinReason says why a run placed on backend b works on host.
func pinReason(b, host string) string {
	if journaled[b] {
		return fmt.Sprintf("placed on the host-local sandbox %q: its workspace lives on host %s, journaled to the store (it moves to another host when none of %s's workers serves it)", b, host, host)
	}
	return fmt.Sprintf("placed on the host-local sandbox %q: its workspace lives on host %s", b, host)
}

// move takes a run pinned to another host to this one when no live worker
// on its host serves it: its workspaces are rebuilt here from their
// journals. It returns what it did ("" and the error River should see when
// the run stays where it is: snoozed while its host serves it or it
// cannot move, saying why on the run).
func (w *Worker) move(ctx, fctx context.Context, run *Run) (string, error) {
	live, err := w.c.live(ctx, &w.c.cache)
	if err != nil {
		return "", err
	}
	for _, lw := range live {
		if lw.Host == run.Host && (run.Revision == "" || slices.Contains(lw.Serves, run.Revision)) {
			return "", river.JobSnooze(2 * time.Second) // its host still works it
		}
	}
	from := run.Host
	n, err := w.c.restoreWorkspaces(fctx, run)
	if errors.Is(err, ErrCannotMove) {
		why := fmt.Sprintf("its host %s has no live worker for it, and %v", from, err)
		if run.Pinned != why {
			run.Pinned = why
			if serr := run.save(fctx, w.c.rt.Store); serr != nil {
				return "", w.lost(serr)
			}
		}
		return "", river.JobSnooze(2 * time.Second)
	}
	if err != nil {
		return "", err
	}
	run.Host = w.c.host
	run.Pinned = pinReason(run.Placed, w.c.host)
	return fmt.Sprintf("moved it from host %s, where no live worker serves it, rebuilding %d workspace(s) from their journals", from, n), nil
}
