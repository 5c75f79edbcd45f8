package agent

import (
	"context"

	"github.com/openrath/rath/session"
)

// An approved call to a tool that is not idempotent runs after a pause, in
// a run resumed from its record (a cluster's continuation), where a call
// whose turn is recorded without a result is taken for one interrupted
// while it ran. So such a call is marked as begun — an approval chunk with
// the verdict "started", committed — before it runs: a resumed run that
// finds the verdict without the mark knows the call never ran, and runs
// it; with the mark and no result, its effect is unknown (a review, or an
// interrupted result), as for any call.

// verdictOf reports whether s holds, after its last turn, an approval
// chunk with verdict v for call id.
func verdictOf(s *session.Session, id, v string) bool {
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Assistant != nil {
			return false
		}
		if c.Approval != nil && c.Approval.CallID == id && c.Approval.Verdict == v {
			return true
		}
	}
	return false
}

// startedSinceReview reports whether s holds, after its last turn, a
// start mark for call id later than the call's last review: the call was
// settled as not happened, then begun again.
func startedSinceReview(s *session.Session, id string) bool {
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Assistant != nil {
			return false
		}
		if c.Approval == nil || c.Approval.CallID != id {
			continue
		}
		switch {
		case c.Approval.Verdict == session.VerdictStarted:
			return true
		case session.IsReview(c.Approval.Verdict):
			return false
		}
	}
	return false
}

// approvedNotStarted reports whether call id, its turn recorded without a
// result, was approved and never begun: s (with what the record held
// after the turn, start marks included: served) holds its approval and no
// start mark.
func approvedNotStarted(s *session.Session, id string) bool {
	return verdictOf(s, id, session.VerdictApproved) && !verdictOf(s, id, session.VerdictStarted)
}

// markStarted marks the calls among those about to run (at idx) whose
// tools are not idempotent and that run after a pause — approved, or
// settled by a review as not happened — as begun, and commits the marks
// before any of them runs. A call begun again after a review and cut
// short is, like any, of unknown effect: it needs a review of its own.
func (r *run) markStarted(calls []session.ToolCall, idx []int) error {
	var marks []session.Chunk
	for _, i := range idx {
		c := calls[i]
		t := r.a.tools[c.Name]
		if t == nil || t.Idempotent() {
			continue
		}
		approved := verdictOf(r.s, c.ID, session.VerdictApproved) && !verdictOf(r.s, c.ID, session.VerdictStarted)
		rerun := verdictOf(r.s, c.ID, session.VerdictNotHappened) && !startedSinceReview(r.s, c.ID)
		if !approved && !rerun {
			continue
		}
		marks = append(marks, session.Of(&session.Approval{Subject: "tool call " + c.Name + " " + c.ArgsString() + " began",
			CallID: c.ID, Verdict: session.VerdictStarted}).WithTier(session.TierDurable))
	}
	if len(marks) == 0 {
		return nil
	}
	if err := r.add(marks...); err != nil {
		return err
	}
	return r.commit(context.WithoutCancel(r.ctx))
}
