package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Runs on a session. A run submitted with SubmitOptions.Session continues
// that session, as a turn continues a conversation: the runs on one
// session go one at a time, in the order they were submitted, and each
// starts from where the one before it ended. Its input is a fork of the
// session (LabelSession names it) that carries the chunks the session's
// last done run added — re-chained copies, each naming its original
// (Origin) — followed by a decision saying so, then the routing decision.
// A run submitted while an earlier one on the session has not ended waits
// behind it (StateBehind, Run.Behind): when that one ends, however it
// ends, the next is carried forward and queued. A failed or cancelled run
// adds nothing: its successor carries the last done run's output.
//
// Submitting and releasing take the session's lock (a mutex in this
// process, then an advisory lock on PostgreSQL or a flock on SQLite), so
// that two runs submitted at once line up, and a run ending as another is
// submitted behind it releases it. A run left behind a run that ended
// without releasing it (its worker died in between) is released by the
// reroute loop.

// LabelSession names, on a run's input, the session the run continues.
const LabelSession = "rath.cluster.session"

// sessionLockClass is the first key of the advisory locks of sessions'
// runs (see idemLockClass).
const sessionLockClass int32 = 0x73657373 // "sess"

// lockSession takes the lock of the runs on session s.
func (c *Cluster) lockSession(ctx context.Context, s session.ID) (func(), error) {
	sum := sha256.Sum256([]byte(s))
	unlock, err := c.lockKey(ctx, &c.thread, string(s), storeLock{class: sessionLockClass, obj: int32(binary.BigEndian.Uint32(sum[:4])), file: ".session-lock"})
	if err != nil {
		return nil, fmt.Errorf("cluster: session %s: %w", s, err)
	}
	return unlock, nil
}

// forkSession is the bare input of a run on session s: a fork of it,
// placed where s is (or where base, the workflow's own input, is).
func (c *Cluster) forkSession(ctx context.Context, s session.ID, base *session.Session) (*session.Session, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: run on session %q: %w", s, err)
	}
	in, err := c.rt.ForkFrom(ctx, s, base)
	if err != nil {
		return nil, fmt.Errorf("cluster: run on session %s: %w", s, err)
	}
	return in, nil
}

// submitOnSession submits a prepared run on a session: behind the
// session's last run if that one has not ended, else carried forward and
// queued at once.
func (c *Cluster) submitOnSession(ctx context.Context, p *prepared) (session.ID, error) {
	unlock, err := c.lockSession(ctx, p.run.Session)
	if err != nil {
		return "", err
	}
	defer unlock()
	last, err := c.lastOpen(ctx, p.run.Session)
	if err != nil {
		return "", err
	}
	if last != nil {
		p.run.State, p.run.Behind, p.run.Pool = StateBehind, last.ID, ""
		p.run.Why = fmt.Sprintf("waits behind run %s on session %s (%s)", last.ID, p.run.Session, last.State)
		p.queue = ""
		if p.labels, err = p.run.labels(p.also...); err != nil {
			return "", err
		}
		return c.submitOne(ctx, p)
	}
	if p.in, err = c.carry(ctx, p.in, p.run, ""); err != nil {
		return "", err
	}
	p.in = p.in.Append(p.route.chunk("cluster.route"))
	return c.submitNow(ctx, p)
}

// openStates are the states of a run that has not ended, but for behind.
var openStates = []State{StateQueued, StateUnroutable, StateRunning, StateWaitingApproval, StateNeedsReview}

// lastOpen is the run on session s a new run waits behind: the one of its
// runs not ended that no other waits behind (the end of the line), or nil
// when every run on s has ended. It reads by state, so that its cost does
// not grow with the runs s had.
func (c *Cluster) lastOpen(ctx context.Context, s session.ID) (*Run, error) {
	var open []*Run
	waitedFor := map[session.ID]bool{}
	for _, state := range append(openStates, StateBehind) {
		infos, err := c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelSession: string(s), LabelState: string(state)}})
		if err != nil {
			return nil, fmt.Errorf("cluster: runs on session %s: %w", s, err)
		}
		for _, info := range infos {
			run, err := runOf(info)
			if err != nil {
				continue
			}
			open = append(open, run)
			if run.Behind != "" {
				waitedFor[run.Behind] = true
			}
		}
	}
	var last *Run
	for _, run := range open {
		if !waitedFor[run.ID] && (last == nil || run.ID > last.ID) { // ids sort by time
			last = run
		}
	}
	return last, nil
}

// carry extends in, the bare input of run (on its session), with what the
// session's last done run added: the chunks of its output past what in
// holds, re-chained after it, then a decision saying what was carried
// (and, for a run that waited, behind whom). With no done run on the
// session, in is returned as it is (but for that note of a wait).
func (c *Cluster) carry(ctx context.Context, in *session.Session, run *Run, waited session.ID) (*session.Session, error) {
	st := c.rt.Store
	infos, err := st.List(ctx, store.Filter{Labels: map[string]string{LabelSession: string(run.Session), LabelState: string(StateDone)}, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("cluster: runs on session %s: %w", run.Session, err)
	}
	var why string
	if waited != "" {
		why = fmt.Sprintf("waited for run %s to end; ", waited)
	}
	if len(infos) == 0 {
		if waited == "" {
			return in, nil
		}
		return in.Append(sessionNote(run, "", why+"no run on the session is done: starts from the session itself")), nil
	}
	prev, err := runOf(infos[0])
	if err != nil || prev.Output == "" {
		return nil, fmt.Errorf("cluster: run %s on session %s: its output is unknown: %w", infos[0].ID, run.Session, err)
	}
	out, err := st.Load(ctx, prev.Output)
	if err != nil {
		return nil, fmt.Errorf("cluster: output of run %s on session %s: %w", prev.ID, run.Session, err)
	}
	merged, err := in.Merge(out, session.KeepPlacement(session.Theirs), session.MergeOp("continue"))
	if err != nil {
		return nil, fmt.Errorf("cluster: carry run %s's output onto %s: %w", prev.ID, run.ID, err)
	}
	carried, err := session.Assemble(in.ID(), in.Lineage(), merged.Chunks())
	if err != nil {
		return nil, fmt.Errorf("cluster: carry run %s's output onto %s: %w", prev.ID, run.ID, err)
	}
	n := carried.Len() - in.Len()
	return carried.Append(sessionNote(run, out.ID(), fmt.Sprintf("%scontinues session %s after run %s (done): carries the %d chunk(s) its output %s added", why, run.Session, prev.ID, n, out.ID()))), nil
}

// sessionNote is the decision of where a run on a session starts: from
// the output from ("" for the session itself).
func sessionNote(run *Run, from session.ID, why string) session.Chunk {
	choice := string(run.Session)
	if from != "" {
		choice = string(from)
	}
	return session.Of(&session.Decision{Selector: "cluster.session",
		Candidates: []session.Candidate{{Name: choice, Description: "where the run starts"}},
		Choice:     choice, Reason: why}).WithTier(session.TierDurable)
}

// releaseBehind moves on the run waiting behind run, which ended: it is
// carried forward from the session's last done run and queued — or, if
// run ended while it was itself behind a run still going (it was
// cancelled while it waited), it waits behind that one instead.
func (c *Cluster) releaseBehind(ctx context.Context, run *Run) error {
	if run.Session == "" {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	unlock, err := c.lockSession(ctx, run.Session)
	if err != nil {
		return err
	}
	defer unlock()
	infos, err := c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelSession: string(run.Session), LabelState: string(StateBehind)}})
	if err != nil {
		return fmt.Errorf("cluster: runs on session %s: %w", run.Session, err)
	}
	for _, info := range infos {
		next, err := runOf(info)
		if err != nil || next.Behind != run.ID {
			continue
		}
		if err := c.moveOn(ctx, next.ID, run); err != nil && !errors.Is(err, store.ErrFenced) {
			return err
		}
	}
	return nil
}

// moveOn moves on run id, which waited behind the run ended (now over):
// behind the run ended waited for, if that one is still going, else
// released. The caller holds the session's lock.
func (c *Cluster) moveOn(ctx context.Context, id session.ID, ended *Run) error {
	if ended.Behind == "" {
		return c.release(ctx, id, ended.ID)
	}
	before, err := loadRun(ctx, c.rt.Store, ended.Behind)
	if err != nil || before.State.Final() {
		return c.release(ctx, id, ended.ID)
	}
	fctx, run, err := c.take(ctx, id, StateBehind)
	if err != nil || run == nil {
		return err
	}
	run.Behind = before.ID
	run.Why = fmt.Sprintf("waits behind run %s on session %s (%s; run %s, which it waited for, ended %s)", before.ID, run.Session, before.State, ended.ID, ended.State)
	if err := run.save(fctx, c.rt.Store); err != nil {
		return err
	}
	c.runEvent(ctx, run)
	return nil
}

// release queues run id, which waited behind the run waited (now ended):
// its input is carried forward and routed, and its job enqueued — on
// PostgreSQL the input's commit, the record and the job in one
// transaction. The caller holds the session's lock.
func (c *Cluster) release(ctx context.Context, id, waited session.ID) error {
	st := c.rt.Store
	fctx, run, err := c.take(ctx, id, StateBehind)
	if err != nil || run == nil {
		return err // taken meanwhile (cancelled)
	}
	if run.Slices > 0 {
		// A resumed run that waited: its input is as its first slice
		// found it (its agents derive from it); it goes on from its steps.
		live, err := c.live(ctx, &c.cache)
		if err != nil {
			return err
		}
		run.Behind = ""
		note := session.Note(fmt.Sprintf("lifecycle: run %s, which it waited for, ended; the run goes on", waited))
		return c.requeue(ctx, fctx, run, note, decide(poolsOf(live), run.Workflow, run.Revision, run.Needs))
	}
	in, err := st.Load(fctx, id)
	if err != nil {
		return err
	}
	next, err := c.carry(fctx, in, run, waited)
	if err != nil {
		return err
	}
	live, err := c.live(ctx, &c.cache)
	if err != nil {
		return err
	}
	r := decide(poolsOf(live), run.Workflow, run.Revision, run.Needs)
	next = next.Append(r.chunk("cluster.route"))
	run.Pool, run.Why, run.Behind = r.Queue, r.Reason, ""
	if r.Queue != "" && c.pg != nil {
		run.State = StateQueued
		labels, err := run.labels()
		if err != nil {
			return err
		}
		if _, err := commitAndEnqueuePG(fctx, c.q, c.pg, commitJob{s: next, prev: in.Head(), run: string(id), queue: r.Queue, labels: labels}); err != nil {
			return err
		}
		c.runEvent(ctx, run)
		return nil
	}
	if err := st.Commit(fctx, next, in.Head()); err != nil {
		return err
	}
	state := StateQueued
	if r.Queue == "" {
		state = StateUnroutable
	}
	if err := run.move(fctx, st, state); err != nil {
		return err
	}
	c.runEvent(ctx, run)
	if r.Queue == "" {
		return nil
	}
	_, err = c.enqueue(ctx, id, r.Queue) // unfenced: a worker may take the job at once
	return err
}

// releaseStranded releases the runs left behind a run that ended without
// releasing them (its worker died between ending it and releasing the
// next), at most 200 a call.
func (c *Cluster) releaseStranded(ctx context.Context) error {
	st := c.rt.Store
	infos, err := st.List(ctx, store.Filter{Labels: map[string]string{LabelState: string(StateBehind)}, Limit: 200})
	if err != nil || len(infos) == 0 {
		return err
	}
	for _, info := range infos {
		run, err := runOf(info)
		if err != nil {
			continue
		}
		blocker, err := loadRun(ctx, st, run.Behind)
		switch {
		case errors.Is(err, store.ErrNotFound) || errors.Is(err, ErrNotARun):
			blocker = nil
		case err != nil:
			return err
		case !blocker.State.Final():
			continue
		}
		unlock, err := c.lockSession(ctx, run.Session)
		if err != nil {
			return err
		}
		if blocker != nil {
			err = c.moveOn(ctx, run.ID, blocker)
		} else {
			err = c.release(ctx, run.ID, run.Behind)
		}
		unlock()
		if err != nil && !errors.Is(err, store.ErrFenced) {
			return err
		}
		c.log.Warn("run was left behind a run that ended; released it", "run", run.ID, "behind", run.Behind)
	}
	return nil
}

// resumeBehind is Resume of a run on a session an earlier-submitted run
// is still working on: noted on its ledger (note), its cancel request
// cleared, it waits behind last (the end of the session's line) and goes
// on from its steps when that one ends. The caller holds the session's
// lock and fctx's fence.
func (c *Cluster) resumeBehind(ctx, fctx context.Context, run *Run, note session.Chunk, last *Run) error {
	if err := c.record(fctx, run, note); err != nil {
		return err
	}
	run.State, run.Since, run.Behind, run.Pool = StateBehind, time.Now().UTC(), last.ID, ""
	run.Why = fmt.Sprintf("waits behind run %s on session %s (%s)", last.ID, run.Session, last.State)
	if err := run.save(fctx, c.rt.Store, LabelCancel, "", LabelCancelBy, ""); err != nil {
		return err
	}
	c.runEvent(ctx, run)
	c.log.Info("run resumed behind another on its session", "run", run.ID, "behind", last.ID)
	return nil
}
