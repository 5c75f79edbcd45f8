package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/runctx"
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
		if r.wantsApproval(c) {
			return true
		}
	}
	return false
}

// wantsApproval reports whether call c waits for a verdict: its tool is
// one of NeedApproval, or the policy asks for approval; a call the policy
// denies does not (it will not run whatever the verdict).
func (r *run) wantsApproval(c session.ToolCall) bool {
	ru, ruled := r.rulings[c.ID]
	if ruled && ru.effect == policy.Deny {
		return false
	}
	return r.a.approval[c.Name] || ruled && ru.effect == policy.Approve
}

// approvalRequest is the approval chunk asking for a verdict on c: its
// reason, when the policy asked, is the policy's decision.
func (r *run) approvalRequest(c session.ToolCall) session.Chunk {
	a := &session.Approval{Subject: "tool call " + c.Name + " " + c.ArgsString(), CallID: c.ID, Verdict: session.VerdictRequested}
	if ru, ok := r.rulings[c.ID]; ok && ru.effect == policy.Approve {
		a.Reason = "asked by policy: " + ru.why
	}
	return session.Of(a)
}

// pause records an approval request for every call that needs one, marks
// the session paused in the store, and ends the run with ErrPaused. A
// resumed run whose record holds verdicts after the requests (Decide, then
// replay.Resume) takes them instead and goes on: decided is true and
// refused holds the rejected calls' results.
func (r *run) pause(calls []session.ToolCall) (refused map[string]session.ToolResult, decided bool) {
	for _, c := range calls {
		if r.wantsApproval(c) {
			if err := r.add(r.approvalRequest(c)); err != nil {
				r.fail("replay", err)
				return nil, false
			}
		}
	}
	if runctx.RecordedVerdicts(r.ctx) {
		if refused, ok := r.recordedVerdicts(calls); ok {
			return refused, true
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
	return nil, false
}

// recordedVerdicts takes, from a replay's record, the verdicts recorded
// after this step's requests. It reports whether every call that needed
// approval has one.
func (r *run) recordedVerdicts(calls []session.ToolCall) (map[string]session.ToolResult, bool) {
	wanted := map[string]session.ToolCall{}
	for _, c := range calls {
		if r.wantsApproval(c) {
			wanted[c.ID] = c
		}
	}
	s, served, err := runctx.Served(r.ctx, r.s, r.node, func(c session.Chunk) bool {
		a := c.Approval
		if a == nil {
			return false
		}
		_, ok := wanted[a.CallID]
		return ok && (a.Verdict == session.VerdictApproved || a.Verdict == session.VerdictRejected)
	})
	r.s = s
	if err != nil || !served {
		return nil, false
	}
	refused := map[string]session.ToolResult{}
	for i := r.s.Len() - 1; i >= 0 && len(wanted) > 0; i-- {
		ch := r.s.Chunk(i)
		if ch.Assistant != nil {
			break
		}
		a := ch.Approval
		if a == nil || a.Verdict == session.VerdictRequested {
			continue
		}
		c, ok := wanted[a.CallID]
		if !ok {
			continue
		}
		delete(wanted, a.CallID)
		if a.Verdict == session.VerdictRejected {
			refused[c.ID] = rejectedResult(c, a.Reason)
		}
	}
	return refused, len(wanted) == 0
}

// Decide records a person's verdict on every call of s (a run's session
// paused for approval of tool calls, as stored) still waiting for one:
// approval chunks after the requests, under the requests' node, which a
// resumed run (replay.Resume) finds and acts on.
func Decide(s *session.Session, v Verdict) (*session.Session, error) {
	_, pending, _ := pendingCalls(s)
	if len(pending) == 0 {
		return s, fmt.Errorf("agent: session %s has no tool call waiting for approval", s.ID())
	}
	node := ""
	for i := s.Len() - 1; i >= 0; i-- {
		if a := s.Chunk(i).Approval; a != nil && a.Verdict == session.VerdictRequested {
			node = s.Chunk(i).Node
			break
		}
	}
	var cs []session.Chunk
	for _, c := range pending {
		cs = append(cs, v.chunk(c).WithNode(node))
	}
	return s.TryAppend(cs...)
}

// chunk is the approval chunk recording v on call c.
func (v Verdict) chunk(c session.ToolCall) session.Chunk {
	verdict := session.VerdictRejected
	if v.Approve {
		verdict = session.VerdictApproved
	}
	return session.Of(&session.Approval{Subject: "tool call " + c.Name, CallID: c.ID, Verdict: verdict, By: v.By, Reason: v.Reason})
}

// rejectedResult is the error result of a call a person rejected.
func rejectedResult(c session.ToolCall, reason string) session.ToolResult {
	msg := "rejected"
	if reason != "" {
		msg += ": " + reason
	}
	return session.ToolResult{CallID: c.ID, Tool: c.Name, Args: c.Args,
		Error: &session.ToolError{Kind: session.ToolErrRejected, Message: msg}}
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
		r := &run{a: a, ctx: ctx, yield: yield, s: s, node: nodeOf(s, a.node), player: runctx.PlayerFrom(ctx), pol: a.decider(ctx)}
		defer r.release()
		if st := r.store(); st != nil {
			if info, err := st.Info(ctx, s.ID()); err == nil && info.Head == s.Head() {
				r.stored = s.Head()
			}
		}
		calls, pending, step := pendingCalls(s)
		if len(pending) == 0 {
			yield(Event{Kind: Done, Session: s}, fmt.Errorf("agent %s: session %s has no approval waiting", a.cfg.Name, s.ID()))
			return
		}
		// What the policy decided on the step's calls before the pause
		// stands: the approved calls run within its constraints, the
		// denied ones do not.
		r.rulings = recordedRulings(s, calls)
		refused := map[string]session.ToolResult{}
		for _, c := range pending {
			if err := r.add(v.chunk(c)); err != nil {
				r.fail("replay", err)
				return
			}
			if !v.Approve {
				refused[c.ID] = rejectedResult(c, v.Reason)
			}
		}
		if st := r.store(); st != nil {
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
