package rath

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Resume finishes an interrupted run: id is the run's id, or any session
// one of its agents committed. It takes the run over — its lock, and a new
// fencing epoch, so that nothing its last owner might still do is stored —
// builds its workflow (registered under the name the run recorded, with
// the input text it recorded) and runs it by replay.Resume: the recorded
// steps are replayed and the rest runs live. A call to a tool that is not
// idempotent, made but unfinished when the run stopped, is not made again:
// its result is an interrupted error, so the model knows its effect is
// unknown. The sessions the last attempt left unfinished are marked
// failed (that attempt died); they remain the record the run resumes from.
// A run whose output was stored closed before its process died (which had
// not yet marked the run) is only marked closed, its output returned.
//
// Resume refuses a run whose owner is alive (ErrRunLive) or cannot be
// checked from here (ErrOwnerUnknown), a run that finished
// (ErrRunFinished), one whose workflow is not registered
// (ErrUnknownWorkflow) and a session that is no such run (ErrNotARun).
// Run's OnStart and StopOn apply. The output is returned with any error.
func (r *Runtime) Resume(ctx context.Context, id session.ID, opts ...RunOption) (*session.Session, error) {
	ctx = r.WithPolicy(ctx)
	var o runOptions
	for _, f := range opts {
		f(&o)
	}
	info, err := r.runFor(ctx, id)
	if err != nil {
		return nil, err
	}
	run := info.ID
	st, err := r.judge(ctx, &prober{r: r}, info)
	if err != nil && st.live != dead {
		return nil, runErr(run, ErrOwnerUnknown, "run %s may be live: whether its owner, %s, is alive cannot be checked: %v", run, st.owner, err)
	}
	if err := resumable(st); err != nil {
		return nil, err
	}
	w, err := lookup(st.workflow)
	if err != nil {
		return nil, runErr(run, ErrUnknownWorkflow, "run %s ran workflow %q, which is not registered here", run, st.workflow)
	}
	lk, err := r.lockRun(ctx, run, &st.owner)
	if errors.Is(err, ErrRunLive) {
		return nil, runErr(run, ErrRunLive, "run %s is live: another process took it over just now", run)
	}
	if err != nil {
		return nil, err
	}
	// An owner that finished the run gave its lock up only after: read
	// the run again under the lock.
	if again, err := r.Store.Info(ctx, run); err != nil || !unfinished(again.Status) {
		if err == nil {
			err = runErr(run, ErrRunFinished, "run %s has finished (%s)", run, again.Status)
		}
		return nil, errors.Join(err, lk.release())
	}
	bctx := withRecordedArgs(ctx, st.info) // Build sees the run's parameters as at first
	if st.input != nil {
		bctx = WithInput(bctx, *st.input)
	}
	m, _, err := w.Build(bctx, r)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("rath: build %s: %w", w.Name, err), lk.release())
	}
	own, err := r.own(bctx, run, lk, nil)
	if err != nil {
		return nil, fmt.Errorf("rath: resume %s: %w", run, err)
	}
	o.start(run)
	if out, ok := r.endedBefore(own.fence, run, w.Name); ok {
		return r.finish(own, w.Name, out, nil)
	}
	r.endAttempt(own.fence, run)
	rctx, stopped := o.stoppable(runctx.WithReview(own.ctx)) // a call whose effect is unknown waits for a person
	out, err := replay.Resume(flow.WithOutputLabels(rctx, map[string]string{WorkflowLabel: w.Name}), m, r.Store, run)
	stopped()
	return r.finish(own, w.Name, out, err)
}

// endedBefore returns the output of a run that finished before its owner
// died, which then had not yet recorded it on the run's input.
func (r *Runtime) endedBefore(ctx context.Context, run session.ID, name string) (*session.Session, bool) {
	infos, err := r.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(run), WorkflowLabel: name},
		Status: []store.Status{store.StatusClosed}})
	if err != nil || len(infos) == 0 {
		return nil, false
	}
	out, err := r.Store.Load(ctx, infos[0].ID)
	return out, err == nil
}

// endAttempt marks failed the sessions the run's last attempt left
// unfinished (its agents' partial sessions): that attempt died. They stay
// the record the run resumes from. Nothing depends on it: an error only
// leaves them as they were.
func (r *Runtime) endAttempt(ctx context.Context, run session.ID) {
	infos, err := r.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(run)},
		Status: []store.Status{store.StatusOpen, store.StatusActive, store.StatusPaused}})
	if err != nil {
		return
	}
	for _, i := range infos {
		if i.ID != run {
			_ = store.MoveTo(ctx, r.Store, i.ID, store.StatusFailed)
		}
	}
}

// resumable says why a judged run cannot be resumed, if it cannot.
func resumable(st runState) error {
	run := st.info.ID
	switch {
	case !unfinished(st.info.Status):
		return runErr(run, ErrRunFinished, "run %s has finished (%s)", run, st.info.Status)
	case st.live == alive:
		return runErr(run, ErrRunLive, "run %s is live: %s owns it", run, st.owner)
	case st.live == unknown && st.owner.Lock == LockPostgres:
		return runErr(run, ErrOwnerUnknown, "run %s may be live: the database restarted less than %s ago, and its owner, %s, may still lock it again",
			run, restartGrace, st.owner)
	case st.live == unknown:
		return runErr(run, ErrOwnerUnknown, "run %s may be live: its owner, %s, holds a lock file that is not on this machine (%s)", run, st.owner, st.owner.Path)
	}
	return nil
}
