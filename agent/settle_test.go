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
