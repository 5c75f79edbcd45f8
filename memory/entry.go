package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/session"
)

// Kinds of evidence an entry can rest on.
const (
	EvidenceToolResult = "tool_result"
	EvidenceHuman      = "human_correction"
	EvidenceFailure    = "failed_attempt"
	EvidenceValidation = "validation_signal"
	EvidenceTranscript = "transcript" // Commit's archive of a session
	EvidenceExtracted  = "extracted"  // a fact a model extracted at Commit
)

// Provenance says who wrote an entry and why.
type Provenance struct {
	Session  session.ID        `json:"session,omitempty"`
	Evidence []session.ChunkID `json:"evidence,omitempty"`
	Agent    string            `json:"agent,omitempty"`
	Kind     string            `json:"kind,omitempty"`
	Time     time.Time         `json:"time"`
}

// Entry is one memory.
type Entry struct {
	URI        URI        `json:"-"`
	Content    string     `json:"content"`
	Provenance Provenance `json:"provenance"`
}

// ErrBadEntry: an entry's content or provenance cannot be stored.
var ErrBadEntry = errors.New("memory: bad entry")

// Check reports whether every backend can store e: a well-formed URI
// (ErrBadURI), content without NUL characters (PostgreSQL's text cannot
// hold one), and well-formed ids in its provenance (a recall copies them
// into a chunk, which a store refuses if they are malformed).
func (e Entry) Check() error {
	if err := e.URI.Check(); err != nil {
		return err
	}
	if strings.ContainsRune(e.Content, 0) {
		return fmt.Errorf("%w: %s: content holds a NUL character", ErrBadEntry, e.URI)
	}
	if p := e.Provenance; p.Session != "" {
		if err := p.Session.Validate(); err != nil {
			return fmt.Errorf("%w: %s: provenance: %v", ErrBadEntry, e.URI, err)
		}
	}
	for _, id := range e.Provenance.Evidence {
		if err := id.Validate(); err != nil {
			return fmt.Errorf("%w: %s: provenance: evidence: %v", ErrBadEntry, e.URI, err)
		}
	}
	return nil
}

// Hash is the "sha256:<hex>" of the content.
func (e Entry) Hash() string { return Hash(e.Content) }

// Hash is the "sha256:<hex>" of content.
func Hash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Hit is an entry a recall found, with its score (higher is better).
type Hit struct {
	Entry
	Score float64
	// Via says how the backend found the entry: one of the Via constants,
	// or several joined by "+" when rankings were fused ("" if the
	// backend does not say).
	Via string
}

// How a backend found a hit (Hit.Via).
const (
	ViaLexical = "bm25"  // full-text ranking
	ViaScan    = "scan"  // an exact scan (a scope too small for a graph, or no index)
	ViaGraph   = "graph" // a search of the vector index's graph
	// ViaWider: the graph search found fewer than k vectors above the
	// similarity cut-off, and a search keeping more candidates did.
	ViaWider = "graph-wider"
	// ViaExact: both graph searches found fewer than k above the cut-off,
	// and an exact scan of the scope answered.
	ViaExact = "exact-fallback"
)

// Selector chooses entries to forget. Zero fields match anything; at least
// one must be set.
type Selector struct {
	// URI matches one entry; Prefix every entry under a URI prefix
	// ("memory://project/rath/" for a whole scope).
	URI    string
	Prefix string
	// Session matches entries written by that session (DerivedFrom).
	Session session.ID
}

// DerivedFrom selects every entry a session wrote: Forget with it rolls the
// session's writes back. Forget recorded in that session itself also rolls
// back what the interrupted attempts it resumes wrote (Attempts).
func DerivedFrom(id session.ID) Selector { return Selector{Session: id} }

// Attempts is DerivedFrom session id, whose lineage is l, and each
// interrupted attempt it resumes
// (session.Lineage.Resumes): a resumed step replays what its attempts
// recorded, their memory writes included, without writing them again, so
// the entries name the attempt that wrote them.
func Attempts(id session.ID, l session.Lineage) []Selector {
	ids := append([]session.ID{id}, l.Resumes()...)
	out := make([]Selector, len(ids))
	for i, id := range ids {
		out[i] = DerivedFrom(id)
	}
	return out
}

// attempts is what Forget through s deletes for sel: sel, and, for
// DerivedFrom s itself, DerivedFrom each attempt s resumes.
func (sel Selector) attempts(s *session.Session) []Selector {
	if s == nil || sel.Session != s.ID() {
		return []Selector{sel}
	}
	out := Attempts(s.ID(), s.Lineage())
	for i := range out {
		out[i].URI, out[i].Prefix = sel.URI, sel.Prefix
	}
	return out
}

func (s Selector) String() string {
	var parts []string
	if s.URI != "" {
		parts = append(parts, "uri="+s.URI)
	}
	if s.Prefix != "" {
		parts = append(parts, "prefix="+s.Prefix)
	}
	if s.Session != "" {
		parts = append(parts, "derived_from="+string(s.Session))
	}
	if len(parts) == 0 {
		return "(nothing)"
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += " " + p
	}
	return out
}
