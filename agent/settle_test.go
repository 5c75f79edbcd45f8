package agent_test

import (
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/session"
)

// A call approved and marked as begun ends its session with the approval
// and the start mark after its turn: a review of it settles there too.
func TestSettleAfterStartMark(t *testing.T) {
	call := session.NewToolCall("c1", "package", `{}`)
	s := session.FromUser("release").Append(
		session.Assistant("", call),
		session.Of(&session.Approval{Subject: "tool call package", CallID: "c1", Verdict: session.VerdictApproved}),
		session.Of(&session.Approval{Subject: "tool call package began", CallID: "c1", Verdict: session.VerdictStarted}),
	)
	out, err := agent.Settle(s, "n", []session.ToolCall{call}, agent.Review{CallID: "c1", Verdict: session.VerdictHappened, By: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Chunk(out.Len() - 1); last.Approval == nil || last.Approval.Verdict != session.VerdictHappened {
		t.Fatalf("the review is not last: %+v", last)
	}
	if _, err := agent.Settle(session.FromUser("x"), "n", []session.ToolCall{call}); err == nil {
		t.Fatal("a session without the calls' turn was settled")
	}
}

// Under a policy the calls' turn is followed by the policy's decisions on
// them: a review of a call cut there settles too.
func TestSettleAfterPolicyDecisions(t *testing.T) {
	call := session.NewToolCall("c1", "run_command", `{"shell":"make"}`)
	s := session.FromUser("build").Append(
		session.Assistant("", call),
		session.Of(&session.Decision{Selector: agent.PolicySelector, Choice: "allow", Reason: "tool run_command (call c1): rule tests: ok",
			Candidates: []session.Candidate{{Name: "allow"}, {Name: "constrain"}, {Name: "approve"}, {Name: "deny"}}}),
		session.Of(&session.Approval{Subject: "tool call run_command began", CallID: "c1", Verdict: session.VerdictStarted}),
	)
	out, err := agent.Settle(s, "n", []session.ToolCall{call}, agent.Review{CallID: "c1", Verdict: session.VerdictNotHappened, By: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Chunk(out.Len() - 1); last.Approval == nil || last.Approval.Verdict != session.VerdictNotHappened {
		t.Fatalf("the review is not last: %+v", last)
	}
	other := session.FromUser("build").Append(session.Assistant("", call),
		session.Of(&session.Decision{Selector: "route", Choice: "a", Candidates: []session.Candidate{{Name: "a"}}}))
	if _, err := agent.Settle(other, "n", []session.ToolCall{call}); err == nil {
		t.Fatal("a session whose turn is followed by another selector's decision was settled")
	}
}
