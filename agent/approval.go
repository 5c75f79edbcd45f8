package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ErrPaused: the run stopped to wait for a human's verdict on a tool call;
// continue it with Resume.
var ErrPaused = errors.New("agent: paused for approval")

// Verdict is a human's answer to an approval request.
type Verdict struct {
	Approve bool
	By      string
	Reason  string
}

func (r *run) needsApproval(calls []session.ToolCall) bool {
	for _, c := range calls {
		if r.a.approval[c.Name] {
			return true
		}
	}
	return false
}

// pause records an approval request for every call that needs one, marks
// the session paused in the store, and ends the run with ErrPaused.
func (r *run) pause(calls []session.ToolCall) {
	for _, c := range calls {
		if r.a.approval[c.Name] {
			if err := r.add(session.Of(&session.Approval{Subject: "tool call " + c.Name + " " + c.ArgsString(), CallID: c.ID,
				Verdict: session.VerdictRequested})); err != nil {
				r.fail("replay", err)
				return
			}
		}
	}
	ctx := context.WithoutCancel(r.ctx)
	if err := r.commit(ctx); err != nil {
		r.yield(Event{Kind: Done, Session: r.s}, err)
		return
	}
	if st := r.store(); st != nil {
		if err := store.MoveTo(ctx, st, r.s.ID(), store.StatusPaused); err != nil {
			r.yield(Event{Kind: Done, Session: r.s}, err)
			return
		}
	}
	if !r.stopped {
		r.yield(Event{Kind: Done, Session: r.s}, ErrPaused)
	}
}

// Resume continues a run paused for approval: it records the verdict for
// every pending request, runs the approved calls (a rejected call gets an
// error result of kind rejected, with the reason), and goes on with the
// loop. s is the session Forward returned with ErrPaused (or the same
// session loaded from the store).
func (a *Agent) Resume(ctx context.Context, s *session.Session, v Verdict) (*session.Session, error) {
	var out *session.Session
	for ev, err := range a.ResumeRun(ctx, s, v) {
		if ev.Session != nil {
			out = ev.Session
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// ResumeRun is Resume with events.
func (a *Agent) ResumeRun(ctx context.Context, s *session.Session, v Verdict) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r := &run{a: a, ctx: ctx, yield: yield, s: s, node: nodeOf(s, a.node), player: PlayerFrom(ctx)}
		defer r.release()
		if a.cfg.Store != nil {
			if info, err := a.cfg.Store.Info(ctx, s.ID()); err == nil && info.Head == s.Head() {
				r.stored = s.Head()
			}
		}
		calls, pending, step := pendingCalls(s)
		if len(pending) == 0 {
			yield(Event{Kind: Done, Session: s}, fmt.Errorf("agent %s: session %s has no approval waiting", a.cfg.Name, s.ID()))
			return
		}
		verdict := session.VerdictRejected
		if v.Approve {
			verdict = session.VerdictApproved
		}
		refused := map[string]session.ToolResult{}
		for _, c := range pending {
			if err := r.add(session.Of(&session.Approval{Subject: "tool call " + c.Name, CallID: c.ID, Verdict: verdict,
				By: v.By, Reason: v.Reason})); err != nil {
				r.fail("replay", err)
				return
			}
			if !v.Approve {
				msg := "rejected"
				if v.Reason != "" {
					msg += ": " + v.Reason
				}
				refused[c.ID] = session.ToolResult{CallID: c.ID, Tool: c.Name, Args: c.Args,
					Error: &session.ToolError{Kind: session.ToolErrRejected, Message: msg}}
			}
		}
		if st := a.cfg.Store; st != nil {
			if err := store.MoveTo(ctx, st, s.ID(), store.StatusActive); err != nil {
				yield(Event{Kind: Done, Session: r.s}, err)
				return
			}
		}
		if r.toolStep(step, calls, refused) {
			r.steps(step + 1)
		}
	}
}

// pendingCalls finds the last assistant turn's calls, the ones with an
// approval requested and no verdict after it, and the step number.
func pendingCalls(s *session.Session) (calls, pending []session.ToolCall, step int) {
	requested := map[string]bool{}
	for _, c := range s.All() {
		switch {
		case c.Assistant != nil:
			step++
			calls = c.Assistant.ToolCalls
			clear(requested)
		case c.Approval != nil && c.Approval.Verdict == session.VerdictRequested:
			requested[c.Approval.CallID] = true
		case c.Approval != nil:
			delete(requested, c.Approval.CallID)
		case c.ToolResult != nil:
			delete(requested, c.ToolResult.CallID)
		}
	}
	for _, c := range calls {
		if requested[c.ID] {
			pending = append(pending, c)
		}
	}
	return calls, pending, step
}

// nodeOf is the node of the run s holds: the node its last chunk made by
// an agent named base carries (base itself if none).
func nodeOf(s *session.Session, base string) string {
	for i := s.Len() - 1; i >= 0; i-- {
		n := s.Chunk(i).Node
		if n == base || strings.HasPrefix(n, base+"#") || strings.Contains(n, "/"+base+"#") {
			return n
		}
	}
	return base
}
