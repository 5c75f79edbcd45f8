package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/openrath/rath/session"
)

// ErrNeedsReview: a resumed run found calls to tools that are not
// idempotent made but never finished (their process died while they ran),
// and its context asks for a review (runctx.WithReview) rather than guessing. The
// run stops, committed, until a person settles each call with a review
// verdict appended after the call's turn (Settle); then it resumes.
var ErrNeedsReview = errors.New("agent: a tool call's effect is unknown and needs a review")

// ErrAborted: a review ended the run.
var ErrAborted = errors.New("agent: ended by a review")

// Unsettled is the error of a run stopped for review: the session holding
// the calls' turn (committed, its head the turn) and the calls.
type Unsettled struct {
	Session session.ID         `json:"session"`
	Head    session.ChunkID    `json:"head"`
	Node    string             `json:"node"`
	Calls   []session.ToolCall `json:"calls"`
}

func (u *Unsettled) Error() string {
	names := make([]string, len(u.Calls))
	for i, c := range u.Calls {
		names[i] = c.Name + " (" + c.ID + ")"
	}
	return fmt.Sprintf("%v: %s in session %s at %s", ErrNeedsReview, strings.Join(names, ", "), u.Session, u.Node)
}

// Unwrap makes errors.Is(err, ErrNeedsReview) hold.
func (u *Unsettled) Unwrap() error { return ErrNeedsReview }

// Review is a person's verdict on an unsettled call.
type Review struct {
	CallID  string
	Verdict string // session.VerdictHappened, VerdictNotHappened or VerdictAborted
	By      string
	Reason  string
	// Result is what the call returned, for a call that happened, if known.
	Result string
}

// Settle appends the reviews of s's unsettled calls to s (whose head is
// the calls' turn, or approvals after it, as an *Unsettled error names
// it): one durable approval chunk each, under the turn's node, so the
// resumed run finds them after the turn.
func Settle(s *session.Session, node string, calls []session.ToolCall, rs ...Review) (*session.Session, error) {
	if !endsWithTurn(s) {
		return s, fmt.Errorf("agent: settle: session %s does not end with the calls' turn", s.ID())
	}
	var cs []session.Chunk
	for _, r := range rs {
		var call *session.ToolCall
		for i := range calls {
			if calls[i].ID == r.CallID {
				call = &calls[i]
			}
		}
		if call == nil {
			return s, fmt.Errorf("agent: settle: %s is not an unsettled call of session %s", r.CallID, s.ID())
		}
		if !session.IsReview(r.Verdict) {
			return s, fmt.Errorf("agent: settle: %q is not a review verdict", r.Verdict)
		}
		if r.Result != "" && r.Verdict != session.VerdictHappened {
			return s, fmt.Errorf("agent: settle: a result is given only for a call that happened")
		}
		cs = append(cs, session.Of(&session.Approval{Subject: "review of tool call " + call.Name + " " + call.ArgsString(),
			CallID: call.ID, Verdict: r.Verdict, By: r.By, Reason: r.Reason, Result: r.Result}).
			WithNode(node).WithTier(session.TierDurable))
	}
	return s.TryAppend(cs...)
}

// endsWithTurn reports whether s ends with a turn, followed by nothing but
// approval chunks (verdicts, reviews, start marks of its calls) and the
// policy's decisions on its calls.
func endsWithTurn(s *session.Session) bool {
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Assistant != nil {
			return true
		}
		if c.Approval == nil && !isPolicyDecision(c) {
			return false
		}
	}
	return false
}

// settledBy returns the review verdict recorded in s, after its last turn,
// for call id (nil if none).
func settledBy(s *session.Session, id string) *session.Approval {
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Assistant != nil {
			return nil
		}
		if c.Approval != nil && c.Approval.CallID == id && session.IsReview(c.Approval.Verdict) {
			return c.Approval
		}
	}
	return nil
}

// reviewed is the result a review gives a call (ok false: run it again),
// or the error it ends the run with.
func reviewed(a *session.Approval, call session.ToolCall) (session.ToolResult, bool, error) {
	switch a.Verdict {
	case session.VerdictHappened:
		content := a.Result
		if content == "" {
			content = "the call's effect happened (settled by review); what it returned is unknown"
		}
		return session.ToolResult{CallID: call.ID, Tool: call.Name, Args: call.Args, Content: content}, true, nil
	case session.VerdictNotHappened:
		return session.ToolResult{}, false, nil
	default:
		return session.ToolResult{}, false, fmt.Errorf("%w: call %s %s by %s: %s", ErrAborted, call.Name, call.ID, a.By, a.Reason)
	}
}
