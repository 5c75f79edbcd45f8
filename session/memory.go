package session

import "fmt"

// MemoryOp is the operation a memory chunk records.
type MemoryOp string

// Memory operations.
const (
	MemoryRecall   MemoryOp = "recall"
	MemoryRemember MemoryOp = "remember"
	MemoryCommit   MemoryOp = "commit"
	MemoryForget   MemoryOp = "forget"
)

// MemoryHit is one entry returned by a recall.
type MemoryHit struct {
	URI   string  `json:"uri"`
	Score float64 `json:"score"`
	// Hash is the "sha256:<hex>" of the entry's content when it was read.
	Hash string `json:"hash,omitempty"`
	// Text is what was placed in the model's view.
	Text string `json:"text,omitempty"`
	// Writer is the session that wrote the entry, Evidence the chunks (of
	// the writer) that justified it and EvidenceKind their kind: with them
	// the recall alone says why the memory was there.
	Writer       ID        `json:"writer,omitempty"`
	Evidence     []ChunkID `json:"evidence,omitempty"`
	EvidenceKind string    `json:"evidence_kind,omitempty"`
	// Via is how the memory backend found the entry (memory.Hit.Via):
	// which ranking, and whether a vector search had to fall back to a
	// wider or an exact one.
	Via string `json:"via,omitempty"`
}

// MemoryEvent is the body of a memory chunk: one operation on long-term
// memory done through this session, with enough provenance to explain later
// why a memory was present in a run and what justified it.
type MemoryEvent struct {
	Op    MemoryOp `json:"op"`
	Store string   `json:"store,omitempty"` // the memory backend's name
	// Recall.
	Query  string      `json:"query,omitempty"`
	Scopes []string    `json:"scopes,omitempty"`
	K      int         `json:"k,omitempty"`
	Hits   []MemoryHit `json:"hits,omitempty"`
	// Remember, commit and forget.
	URI         string `json:"uri,omitempty"`
	ContentHash string `json:"content_hash,omitempty"`
	// Evidence lists the chunks that justify a write.
	Evidence     []ChunkID `json:"evidence,omitempty"`
	EvidenceKind string    `json:"evidence_kind,omitempty"`
	// Selector describes what a forget matched; Count how many entries an
	// operation touched.
	Selector string `json:"selector,omitempty"`
	Count    int    `json:"count,omitempty"`
	// Forgotten lists the URIs a forget removed.
	Forgotten []string `json:"forgotten,omitempty"`
}

func (*MemoryEvent) Kind() Kind { return KindMemory }

func (m *MemoryEvent) validate() error {
	switch m.Op {
	case MemoryRecall, MemoryRemember, MemoryCommit, MemoryForget:
	default:
		return fmt.Errorf("%w: memory op %q", ErrInvalid, m.Op)
	}
	for _, id := range m.Evidence {
		if err := id.Validate(); err != nil {
			return err
		}
	}
	for _, h := range m.Hits {
		for _, id := range h.Evidence {
			if err := id.Validate(); err != nil {
				return fmt.Errorf("hit %s: %w", h.URI, err)
			}
		}
	}
	return nil
}
