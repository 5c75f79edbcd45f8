package export

import (
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// A run that forks two attempts, rejects one and accepts the other, then
// joins them: each attempt's branch carries its outcome up to the fork,
// the shared trunk and the join carry none.
func TestOutcomes(t *testing.T) {
	n := func(id, verdict string) Node {
		nd := Node{ID: session.ID(id), Status: "open"}
		if verdict != "" {
			nd.Labels = map[string]string{"engineering.verdict": verdict}
		}
		return nd
	}
	g := &Graph{
		Root:  "ses_join",
		Nodes: []Node{n("ses_trunk", ""), n("ses_fork1", ""), n("ses_test1", "rejected"), n("ses_fork2", ""), n("ses_test2", "Accepted"), n("ses_join", "")},
		Edges: []Edge{
			{From: "ses_trunk", To: "ses_fork1"}, {From: "ses_fork1", To: "ses_test1"},
			{From: "ses_trunk", To: "ses_fork2"}, {From: "ses_fork2", To: "ses_test2"},
			{From: "ses_test1", To: "ses_join"}, {From: "ses_test2", To: "ses_join"},
		},
	}
	got := outcomes(g)
	want := map[session.ID]string{"ses_fork1": OutcomeRejected, "ses_test1": OutcomeRejected, "ses_fork2": OutcomeAccepted, "ses_test2": OutcomeAccepted}
	if len(got) != len(want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	for id, o := range want {
		if got[id] != o {
			t.Errorf("%s: outcome %q, want %q", id, got[id], o)
		}
	}
	svg := string(drawSVG(g))
	for _, c := range []struct {
		attr string
		n    int
	}{{`data-outcome="rejected"`, 4}, {`data-outcome="accepted"`, 4}} {
		if k := strings.Count(svg, c.attr); k != c.n {
			t.Errorf("%s appears %d times (nodes and the edges into them), want %d", c.attr, k, c.n)
		}
	}
	if !strings.Contains(svg, `data-session-id="ses_test1" data-status="open" data-outcome="rejected"><title>ses_test1</title><rect`) ||
		!strings.Contains(svg, `stroke="`+outcomeColour[OutcomeRejected]+`"`) {
		t.Errorf("the rejected test node is not drawn in the rejected colour:\n%s", svg)
	}
	if failed := outcomeOf(Node{Status: "failed"}); failed != OutcomeRejected {
		t.Errorf("a failed session's outcome is %q, want rejected", failed)
	}
}
