package export

import (
	"strings"

	"github.com/openrath/rath/session"
)

// Outcomes of a judged branch, as the graph drawing classes them.
const (
	OutcomeAccepted = "accepted"
	OutcomeRejected = "rejected"
)

// outcomeOf says whether a node was judged: a label whose key is "verdict"
// or ends in ".verdict" with the value accepted or rejected (workflows
// record their validators' verdicts so), or a failed session (rejected).
func outcomeOf(n Node) string {
	for k, v := range n.Labels {
		if k != "verdict" && !strings.HasSuffix(k, ".verdict") {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case OutcomeAccepted:
			return OutcomeAccepted
		case OutcomeRejected:
			return OutcomeRejected
		}
	}
	if n.Status == "failed" {
		return OutcomeRejected
	}
	return ""
}

// outcomes gives the judged nodes of g and their branches their outcome:
// from each judged node up through the parents that lead to it alone (one
// child in the graph, no verdict of their own), so a rejected attempt and
// an accepted one stand apart up to the point where they forked.
func outcomes(g *Graph) map[session.ID]string {
	children := map[session.ID]int{}
	parents := map[session.ID][]session.ID{}
	for _, e := range g.Edges {
		children[e.From]++
		parents[e.To] = append(parents[e.To], e.From)
	}
	byID := make(map[session.ID]Node, len(g.Nodes))
	for _, n := range g.Nodes {
		byID[n.ID] = n
	}
	out := map[session.ID]string{}
	for _, n := range g.Nodes {
		o := outcomeOf(n)
		if o == "" {
			continue
		}
		out[n.ID] = o
		cur := n.ID
		for {
			ps := parents[cur]
			if len(ps) != 1 || children[ps[0]] != 1 {
				break
			}
			p, ok := byID[ps[0]]
			if !ok || outcomeOf(p) != "" || out[p.ID] != "" {
				break
			}
			out[p.ID] = o
			cur = p.ID
		}
	}
	return out
}

// edgeOutcome is the outcome of an edge that leads into a judged branch:
// its child's.
func edgeOutcome(out map[session.ID]string, e Edge) string { return out[e.To] }
