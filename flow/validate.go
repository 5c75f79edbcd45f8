package flow

import (
	"context"
	"fmt"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// Validator accepts or rejects a session by a Go check and records the
// verdict, with the reason, as an approval chunk. A rejection returns the
// session (verdict included) with an error wrapping ErrRejected.
type Validator struct {
	Name  string
	Check func(ctx context.Context, s *session.Session) (ok bool, reason string, err error)
}

// Validate returns a validator.
func Validate(name string, check func(ctx context.Context, s *session.Session) (bool, string, error)) *Validator {
	return &Validator{Name: name, Check: check}
}

// Forward implements Module.
func (v *Validator) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	if v.Check == nil {
		return s, fmt.Errorf("%w: validator %s has no Check", ErrConfig, v.Name)
	}
	ok, reason, err := v.Check(ctx, s)
	if err != nil {
		return s, fmt.Errorf("flow: validator %s: %w", v.Name, err)
	}
	verdict := session.VerdictApproved
	if !ok {
		verdict = session.VerdictRejected
	}
	node := runctx.Invoke(ctx, "validator:"+v.Name)
	s, err = runctx.Record(ctx, s, node, session.Of(&session.Approval{Subject: "validator " + v.Name, Verdict: verdict,
		By: "validator:" + v.Name, Reason: reason}).WithTier(session.TierDurable))
	if err != nil {
		return s, err
	}
	if !ok {
		return s, fmt.Errorf("%w by validator %s: %s", ErrRejected, v.Name, reason)
	}
	return s, nil
}

// Gate is a human approval: the first time the session reaches it, it
// records a request and returns ErrPaused; once Decide has recorded a
// verdict for its request, running the workflow again passes an approved
// session on and stops a rejected one with ErrRejected.
type Gate struct {
	Name    string
	Subject string
}

// Approval returns a human approval gate.
func Approval(name, subject string) *Gate { return &Gate{Name: name, Subject: subject} }

// Forward implements Module.
func (g *Gate) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	node := runctx.Invoke(ctx, "approval:"+g.Name)
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Approval == nil || c.Node != node {
			continue
		}
		switch c.Approval.Verdict {
		case session.VerdictApproved:
			return s, nil
		case session.VerdictRejected:
			return s, fmt.Errorf("%w at %s by %s: %s", ErrRejected, node, c.Approval.By, c.Approval.Reason)
		default:
			return s, fmt.Errorf("%w: %s waits for a verdict on %q", ErrPaused, node, g.Subject)
		}
	}
	s, err := runctx.Record(ctx, s, node, session.Of(&session.Approval{Subject: g.Subject, Verdict: session.VerdictRequested}).WithTier(session.TierDurable))
	if err != nil {
		return s, err
	}
	// A resumed run finds the verdict given meanwhile in the record.
	if p := runctx.PlayerFrom(ctx); p != nil {
		if c, ok := p.Peek(node); ok && c.Approval != nil && c.Approval.Verdict != session.VerdictRequested {
			c.ID, c.Parent = "", ""
			if s, err = runctx.Record(ctx, s, node, c); err != nil {
				return s, err
			}
			if c.Approval.Verdict == session.VerdictApproved {
				return s, nil
			}
			return s, fmt.Errorf("%w at %s by %s: %s", ErrRejected, node, c.Approval.By, c.Approval.Reason)
		}
	}
	return s, fmt.Errorf("%w: %s waits for a verdict on %q", ErrPaused, node, g.Subject)
}

// Decide records a human's verdict on the pending approval request of s
// (the session a run returned with ErrPaused).
func Decide(s *session.Session, approve bool, by, reason string) (*session.Session, error) {
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Approval == nil || c.Approval.CallID != "" {
			continue
		}
		if c.Approval.Verdict != session.VerdictRequested {
			break
		}
		verdict := session.VerdictRejected
		if approve {
			verdict = session.VerdictApproved
		}
		return s.Append(session.Of(&session.Approval{Subject: c.Approval.Subject, Verdict: verdict, By: by, Reason: reason}).
			WithNode(c.Node).WithTier(session.TierDurable)), nil
	}
	return s, fmt.Errorf("flow: session %s has no approval waiting", s.ID())
}
