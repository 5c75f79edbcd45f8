package rath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ReviewLabel is the store label on a run's input session holding the
// calls its run waits on (an agent.Unsettled, JSON): calls to tools that
// are not idempotent, made but unfinished when the run stopped, whose
// effect nobody knows. Resume stops there rather than guess; Review
// settles them.
const ReviewLabel = "rath.run.review"

// StatusNeedsReview is the status shown for a run that waits for a person
// to settle calls whose effect is unknown (ReviewLabel). Like
// StatusInterrupted it is a judgement, not a stored status.
const StatusNeedsReview store.Status = "needs_review"

// ErrNeedsReview: the run stopped at calls whose effect is unknown; Review
// settles them, then Resume goes on. errors.Is(err, agent.ErrNeedsReview)
// holds too.
var ErrNeedsReview = errors.New("rath: the run needs a review")

// ErrNotWaiting: Review was asked of a run that waits for no review.
var ErrNotWaiting = errors.New("rath: the run waits for no review")

// needsReview records that a run stopped at the unsettled calls u and
// returns the error its caller sees.
func (r *Runtime) needsReview(ctx context.Context, run session.ID, u *agent.Unsettled, err error) error {
	b, merr := json.Marshal(u)
	if merr != nil {
		return errors.Join(err, merr)
	}
	if serr := r.Store.SetLabel(ctx, run, ReviewLabel, string(b)); serr != nil {
		return errors.Join(err, serr)
	}
	return &RunError{Run: run, Err: errors.Join(ErrNeedsReview, agent.ErrNeedsReview),
		Msg: fmt.Sprintf("run %s needs a review: %s, made when the run stopped, may or may not have taken effect, and is not made again without a person's word",
			run, callNames(u.Calls))}
}

// callNames names calls for a sentence: "record_effect (call_2)".
func callNames(calls []session.ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name + " (" + c.ID + ")"
	}
	if len(names) == 1 {
		return "the call to " + names[0]
	}
	return "the calls to " + strings.Join(names, ", ")
}

// ReviewOptions settle a run that needs a review.
type ReviewOptions struct {
	// Verdict is session.VerdictHappened (the call took effect; Result
	// is what it returned, if known), VerdictNotHappened (it did not: it
	// is made again) or VerdictAborted (the run ends failed).
	Verdict string
	Result  string
	// CallID settles one call; empty settles every unsettled call alike.
	CallID string
	By     string
	Reason string
}

// Unsettled returns the calls run id waits on (nil if it waits on none).
func (r *Runtime) Unsettled(ctx context.Context, id session.ID) (*agent.Unsettled, error) {
	info, err := r.runFor(ctx, id)
	if err != nil {
		return nil, err
	}
	return unsettledOf(info)
}

func unsettledOf(info store.Info) (*agent.Unsettled, error) {
	raw := info.Labels[ReviewLabel]
	if raw == "" {
		return nil, nil
	}
	var u agent.Unsettled
	if err := json.Unmarshal([]byte(raw), &u); err != nil {
		return nil, fmt.Errorf("rath: run %s: the %s label is malformed: %w", info.ID, ReviewLabel, err)
	}
	return &u, nil
}

// Review settles the calls run id waits on: each gets a review chunk (who,
// why, the verdict) after its turn, in the session that made it. The run
// stays unfinished: Resume then goes on from there — a call that happened
// has its result, one that did not is made again — except after
// VerdictAborted, which ends the run failed. The run must not be live.
func (r *Runtime) Review(ctx context.Context, id session.ID, o ReviewOptions) error {
	info, err := r.runFor(ctx, id)
	if err != nil {
		return err
	}
	run := info.ID
	st, err := r.judge(ctx, &prober{r: r}, info)
	if err != nil && st.live != dead {
		return runErr(run, ErrOwnerUnknown, "run %s may be live: whether its owner, %s, is alive cannot be checked: %v", run, st.owner, err)
	}
	if err := resumable(st); err != nil {
		return err
	}
	lk, err := r.lockRun(ctx, run, &st.owner)
	if err != nil {
		return err
	}
	defer lk.release()
	again, err := r.Store.Info(ctx, run)
	if err != nil {
		return err
	}
	u, err := unsettledOf(again)
	if err != nil {
		return err
	}
	if u == nil || !unfinished(again.Status) {
		return runErr(run, ErrNotWaiting, "run %s waits for no review (%s)", run, again.Status)
	}
	s, err := r.Store.Load(ctx, u.Session)
	if err != nil {
		return fmt.Errorf("rath: review %s: %w", run, err)
	}
	if s.Head() != u.Head {
		return fmt.Errorf("%w: review %s: session %s moved past the calls' turn", store.ErrConflict, run, u.Session)
	}
	var rs []agent.Review
	for _, call := range u.Calls {
		if o.CallID == "" || call.ID == o.CallID {
			rs = append(rs, agent.Review{CallID: call.ID, Verdict: o.Verdict, By: o.By, Reason: o.Reason, Result: o.Result})
		}
	}
	if len(rs) != len(u.Calls) {
		return fmt.Errorf("rath: review %s: settle every unsettled call (%s) alike, or each by its id", run, callNames(u.Calls))
	}
	settled, err := agent.Settle(s, u.Node, u.Calls, rs...)
	if err != nil {
		return fmt.Errorf("rath: review %s: %w", run, err)
	}
	epoch, err := r.Store.Advance(ctx, run)
	if err != nil {
		return err
	}
	fctx := store.WithFence(ctx, store.Fence{Session: run, Epoch: epoch})
	if err := r.Store.Commit(fctx, settled, u.Head); err != nil {
		return fmt.Errorf("rath: review %s: %w", run, err)
	}
	if err := r.Store.SetLabel(fctx, run, ReviewLabel, ""); err != nil {
		return err
	}
	if o.Verdict != session.VerdictAborted {
		return nil
	}
	if err := store.MoveTo(fctx, r.Store, u.Session, store.StatusFailed); err != nil {
		return err
	}
	return store.MoveTo(fctx, r.Store, run, store.StatusFailed)
}
