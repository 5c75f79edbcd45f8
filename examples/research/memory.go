package research

import (
	"context"
	"fmt"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// recallQuery is what the recall step asks memory.
const recallQuery = "best configuration for the machine fault k-nearest-neighbour classifier, validation accuracy"

// Recall is the workflow step that asks memory what earlier runs learnt
// about this task; the recall (query, scopes, hits with their writers and
// evidence) is recorded as a memory chunk.
type Recall struct {
	Memory memory.Memory
	Store  store.Store
}

// Forward implements flow.Module.
func (r *Recall) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	return memoryStep(ctx, r.Store, s, "memory:recall", func(s *session.Session) (*session.Session, error) {
		_, s, err := r.Memory.Recall(ctx, s, memory.Query{Text: recallQuery, Scopes: []string{MemoryScope}, K: 3})
		return s, err
	})
}

// Remember is the workflow step that writes the best validated
// configuration to memory, citing as evidence the tool_result chunk that
// measured it and the approval chunk that accepted it.
type Remember struct {
	Memory memory.Memory
	Store  store.Store
}

// Forward implements flow.Module.
func (r *Remember) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	b, ok := best(Results(s))
	if !ok || b.Accuracy < Threshold {
		return s, fmt.Errorf("research: no validated attempt to remember")
	}
	approval, ok := approvalOf(s, b)
	if !ok {
		return s, fmt.Errorf("research: attempt %d has no approving verdict", b.Attempt)
	}
	e := memory.Entry{
		URI: bestURI,
		Content: fmt.Sprintf("Best configuration for the machine-fault k-nearest-neighbour classifier: k=%d scale=%s, val_accuracy %.2f on the 20 validation rows (attempt %d, validated >= %.2f).",
			b.K, b.Scale, b.Accuracy, b.Attempt, Threshold),
		Provenance: memory.Provenance{Evidence: []session.ChunkID{b.Chunk, approval}, Kind: memory.EvidenceValidation, Agent: "research"},
	}
	return memoryStep(ctx, r.Store, s, "memory:remember", func(s *session.Session) (*session.Session, error) {
		return r.Memory.Remember(ctx, s, e)
	})
}

// approvalOf finds the approved verdict that follows attempt b's result.
func approvalOf(s *session.Session, b Result) (session.ChunkID, bool) {
	after := false
	for _, c := range s.All() {
		if c.ID == b.Chunk {
			after = true
		}
		if after && c.Approval != nil && c.Approval.Verdict == session.VerdictApproved {
			return c.ID, true
		}
	}
	return "", false
}

// memoryStep runs one memory operation as a step of its own, the way an
// agent does: on a session derived from s under the step's node, its memory
// chunk recorded under that node (through the replay player, if any) and
// the session committed, so that the chunk's session (the writer a later
// recall names) is in the store. Under replay the recorded chunk is served
// instead of asking memory again: memory has moved on since.
func memoryStep(ctx context.Context, st store.Store, s *session.Session, base string, op func(*session.Session) (*session.Session, error)) (*session.Session, error) {
	node := runctx.Invoke(ctx, base)
	s = s.Derive(node, nil)
	if s, served, err := runctx.Served(ctx, s, node, func(c session.Chunk) bool { return c.Memory != nil }); served || err != nil {
		return s, err
	}
	n := s.Len()
	done, err := op(s)
	if err != nil {
		return s, fmt.Errorf("research: %s: %w", base, err)
	}
	if s, err = runctx.Adopt(ctx, done, n, node); err != nil {
		return s, err
	}
	if st == nil {
		return s, nil
	}
	if err := st.Commit(ctx, s, ""); err != nil {
		return s, fmt.Errorf("research: commit %s: %w", node, err)
	}
	if id := runctx.ID(ctx); id != "" {
		if err := st.SetLabel(ctx, s.ID(), runctx.Label, string(id)); err != nil {
			return s, fmt.Errorf("research: label %s: %w", node, err)
		}
	}
	return s, nil
}
