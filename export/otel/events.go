package otel

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/openrath/rath/session"
)

// chunkEvent returns the name and attributes of the span event that records
// c, or "" for a chunk that records none (conversation chunks, whose
// contents are not exported).
func chunkEvent(c session.Chunk) (string, []attribute.KeyValue) {
	switch {
	case c.Decision != nil:
		d := c.Decision
		names := make([]string, len(d.Candidates))
		for i, cand := range d.Candidates {
			names[i] = cand.Name
		}
		return EventDecision, attrsOf(
			KeyNode.String(c.Node),
			KeySelector.String(d.Selector),
			KeyChoice.String(d.Choice),
			KeyCandidates.StringSlice(names),
			KeyReason.String(d.Reason),
		)
	case c.Approval != nil:
		a := c.Approval
		return EventApproval, attrsOf(
			KeyNode.String(c.Node),
			KeySubject.String(a.Subject),
			KeyVerdict.String(a.Verdict),
			KeyBy.String(a.By),
			KeyReason.String(a.Reason),
			KeyToolCallID.String(a.CallID),
		)
	case c.Memory != nil:
		m := c.Memory
		attrs := attrsOf(
			KeyNode.String(c.Node),
			KeyMemoryOp.String(string(m.Op)),
			KeyMemoryStore.String(m.Store),
			KeyMemoryScopes.StringSlice(m.Scopes),
			KeyMemoryK.Int(m.K),
			KeyMemoryURI.String(m.URI),
			KeyMemoryCount.Int(m.Count),
		)
		if m.Op == session.MemoryRecall {
			attrs = append(attrs, KeyMemoryHits.Int(len(m.Hits)))
		}
		return EventMemory, attrs
	case c.Compress != nil:
		p := c.Compress
		return EventCompress, attrsOf(
			KeyNode.String(c.Node),
			KeyCompressCount.Int(p.Count),
			KeyCompressModel.String(p.Model),
			KeyTokensBefore.Int64(p.TokensBefore),
			KeyTokensAfter.Int64(p.TokensAfter),
		)
	case c.Placement != nil:
		return EventPlacement, attrsOf(KeyNode.String(c.Node), KeyBackend.String(c.Placement.Backend))
	}
	return "", nil
}
