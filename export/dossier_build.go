package export

import (
	"context"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// BuildDossier gathers the evidence dossier of session id from st: it loads
// the session, its stored metadata and lineage graph, draws the graph with
// the package's own layout (SVG: no Graphviz needed), and walks every chunk
// once.
func BuildDossier(ctx context.Context, st store.Store, id session.ID) (*DossierData, error) {
	s, err := st.Load(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	info, err := st.Info(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	g, err := LoadGraph(ctx, st, id)
	if err != nil {
		return nil, fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	d := newDossier(s)
	d.Session.Status = string(info.Status)
	d.Session.Labels = info.Labels
	d.Session.Created, d.Session.Updated = info.Created.UTC(), info.Updated.UTC()
	d.Graph, d.GraphDOT = g, g.dot()
	svg, err := SVG(ctx, g)
	if err != nil {
		return nil, fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	d.GraphSVG = string(svg)
	d.Verify = verifyStatus(s.Verify(), st.Verify(ctx, id))
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	return d, nil
}

// newDossier builds every part of the dossier that the session alone
// determines.
func newDossier(s *session.Session) *DossierData {
	d := &DossierData{
		Version:     DossierVersion,
		Generated:   time.Now().UTC(),
		Session:     SessionSummary{ID: s.ID(), Head: s.Head(), Len: s.Len(), Lineage: s.Lineage()},
		Environment: []Environment{},
		Timeline:    make([]TimelineEntry, 0, s.Len()),
		Tests:       []TestResult{},
		Decisions:   []DecisionRecord{},
		Rejected:    []Rejection{},
		Approvals:   []ApprovalRecord{},
		Errors:      []ErrorRecord{},
		Memory:      []MemoryRecord{},
	}
	tools := newToolMatcher()
	usage := newUsageSum()
	tree := newWorkflowTree()
	for i, c := range s.All() {
		at := At{Index: i, Chunk: c.ID, Node: c.Node, Time: c.Time.UTC()}
		d.Timeline = append(d.Timeline, TimelineEntry{
			Index: i, ID: c.ID, Kind: c.Kind.String(), Node: c.Node, Time: at.Time,
			Tier: c.Tier.String(), Origin: c.Origin, Summary: summary(c),
		})
		tree.add(c.Node)
		d.add(at, c, tools, usage)
	}
	d.ToolCalls = tools.records()
	for _, r := range d.ToolCalls {
		if t, ok := testOf(r); ok {
			d.Tests = append(d.Tests, t)
		}
	}
	d.Usage = usage.report()
	d.Workflow = tree.root
	return d
}

// add records what chunk c contributes to the dossier's sections.
func (d *DossierData) add(at At, c session.Chunk, tools *toolMatcher, usage *usageSum) {
	switch c.Kind {
	case session.KindUser:
		if d.Task == "" {
			d.Task = c.User.Text
		}
	case session.KindAssistant:
		tools.request(at, c.Assistant.ToolCalls)
	case session.KindToolResult:
		r := tools.result(at, c.ToolResult)
		if r.Error != nil && r.Error.Kind == session.ToolErrRejected {
			d.Rejected = append(d.Rejected, Rejection{At: at, What: RejectedToolCall,
				Subject: r.Tool + " " + r.CallID, Reason: r.Error.Message})
		}
	case session.KindModelCall:
		usage.add(c.Node, c.ModelCall)
	case session.KindPlacement:
		p := c.Placement
		d.Environment = append(d.Environment, Environment{At: at, Backend: p.Backend, Image: p.Spec.Image,
			Spec: p.Spec, SandboxID: p.SandboxID, TreeHash: p.TreeHash, ClonedFrom: p.ClonedFrom, Remote: p.Remote})
	case session.KindDecision:
		d.addDecision(at, c.Decision)
	case session.KindApproval:
		a := c.Approval
		d.Approvals = append(d.Approvals, ApprovalRecord{At: at, Subject: a.Subject, CallID: a.CallID,
			Verdict: a.Verdict, By: a.By, Reason: a.Reason})
		if a.Verdict == session.VerdictRejected {
			d.Rejected = append(d.Rejected, Rejection{At: at, What: RejectedApproval, Subject: a.Subject, By: a.By, Reason: a.Reason})
		}
	case session.KindError:
		d.Errors = append(d.Errors, ErrorRecord{At: at, Code: c.Error.Code, Message: c.Error.Message})
	case session.KindMemory:
		d.Memory = append(d.Memory, MemoryRecord{At: at, MemoryEvent: *c.Memory})
	}
}

// addDecision records a decision and the routes it did not take.
func (d *DossierData) addDecision(at At, dec *session.Decision) {
	d.Decisions = append(d.Decisions, DecisionRecord{At: at, Selector: dec.Selector,
		Candidates: nonNil(dec.Candidates), Choice: dec.Choice, Reason: dec.Reason, ModelCall: dec.ModelCall})
	for _, cand := range dec.Candidates {
		if cand.Name == dec.Choice {
			continue
		}
		reason := fmt.Sprintf("selector %s chose %s", dec.Selector, dec.Choice)
		if dec.Reason != "" {
			reason += ": " + dec.Reason
		}
		d.Rejected = append(d.Rejected, Rejection{At: at, What: RejectedBranch, Subject: cand.Name, By: dec.Selector, Reason: reason})
	}
}

// verifyStatus reports the two verifications.
func verifyStatus(sessionErr, storeErr error) VerifyStatus {
	text := func(err error) string {
		if err == nil {
			return VerifyOK
		}
		return err.Error()
	}
	return VerifyStatus{OK: sessionErr == nil && storeErr == nil, Session: text(sessionErr), Store: text(storeErr)}
}

// nonNil returns s, or an empty slice for nil, so JSON shows [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
