package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// Memory is long-term memory whose every operation through a session is
// recorded in that session.
type Memory interface {
	// Remember writes an entry (replacing one at the same URI), with its
	// provenance taken from s (the session id) and e (evidence, kind,
	// agent), and appends a remember chunk to s.
	Remember(ctx context.Context, s *session.Session, e Entry) (*session.Session, error)
	// Recall finds the k best entries for a query in the given scopes
	// ("project/rath", ...) only, and appends a recall chunk with the hits.
	Recall(ctx context.Context, s *session.Session, q Query) ([]Hit, *session.Session, error)
	// Commit archives s's transcript and, with a model, the durable facts
	// it extracts, each justified by the transcript's chunks. The archive
	// is memory://session/ID/transcript, ID being the session of the
	// step's first attempt (s itself, unless it resumes interrupted
	// attempts: session.Lineage.Resumes), so a resumed step archives in
	// place.
	Commit(ctx context.Context, s *session.Session, o CommitOptions) (*session.Session, error)
	// Forget deletes what sel matches; with a session, the forget is
	// recorded in it. DerivedFrom the session the forget is recorded in
	// also matches what the interrupted attempts it resumes wrote
	// (session.Lineage.Resumes): a resumed run rolls back all it did. The
	// forget is recorded with sel as given (the session's lineage names
	// its attempts), so a resumed run records what an uninterrupted one
	// does.
	Forget(ctx context.Context, s *session.Session, sel Selector) (int, *session.Session, error)
	Get(ctx context.Context, uri URI) (Entry, error)
	// List returns the entries under a URI prefix, by URI.
	List(ctx context.Context, prefix string) ([]Entry, error)
	Close() error
}

// Query is a recall.
type Query struct {
	Text string
	// Scopes are "scope/scope-id" keys; a recall searches only these.
	Scopes []string
	K      int
}

// CommitOptions configure Commit.
type CommitOptions struct {
	// Scope is where extracted facts go ("project/rath"); required with Model.
	Scope string
	// Model, if set, extracts durable facts from the transcript.
	Model model.Model
	// Agent names the writer in the provenance.
	Agent string
}

// OnceDeleter is a Backend that deletes under a key at most once: a delete
// under a key used before deletes nothing and returns what the first one
// deleted. Forget through a session inside a workflow run (runctx.ID) keys
// its deletes by the run, the step (its first attempt) and the session's
// length, so a resumed step that forgets again — its attempt deleted, then
// was cut before recording it — records what the attempt forgot, as an
// uninterrupted run does. (Two forgets with one selector through one
// session at one length in one run are one forget.)
type OnceDeleter interface {
	DeleteOnce(ctx context.Context, key string, sel Selector) ([]URI, error)
}

// Backend stores and searches entries; Over adds the session recording.
type Backend interface {
	Name() string
	Put(ctx context.Context, e Entry) error
	// Search returns at most k entries of the given scope keys matching the
	// query, best first, never one that does not match.
	Search(ctx context.Context, query string, scopes []string, k int) ([]Hit, error)
	Get(ctx context.Context, uri URI) (Entry, error)
	List(ctx context.Context, prefix string) ([]Entry, error)
	Delete(ctx context.Context, sel Selector) ([]URI, error)
	Close() error
}

// Over makes a Memory of a backend.
func Over(b Backend) Memory { return &recorded{b: scopedBackend{b}} }

type recorded struct{ b Backend }

func (m *recorded) note(s *session.Session, ev session.MemoryEvent) *session.Session {
	if s == nil {
		return nil
	}
	ev.Store = m.b.Name()
	return s.Append(session.Of(&ev))
}

func (m *recorded) Remember(ctx context.Context, s *session.Session, e Entry) (*session.Session, error) {
	return m.write(ctx, s, e, session.MemoryRemember)
}

func (m *recorded) write(ctx context.Context, s *session.Session, e Entry, op session.MemoryOp) (*session.Session, error) {
	if s != nil {
		e.Provenance.Session = s.ID()
	}
	if err := e.Check(); err != nil {
		return s, err
	}
	if e.Provenance.Time.IsZero() {
		e.Provenance.Time = time.Now().UTC()
	}
	if err := m.b.Put(ctx, e); err != nil {
		return s, fmt.Errorf("memory %s: remember %s: %w", m.b.Name(), e.URI, err)
	}
	return m.note(s, session.MemoryEvent{Op: op, URI: e.URI.String(), ContentHash: e.Hash(),
		Evidence: e.Provenance.Evidence, EvidenceKind: e.Provenance.Kind}), nil
}

func (m *recorded) Recall(ctx context.Context, s *session.Session, q Query) ([]Hit, *session.Session, error) {
	if len(q.Scopes) == 0 {
		return nil, s, fmt.Errorf("%w: a recall names no scopes", ErrScope)
	}
	if q.K <= 0 {
		q.K = 5
	}
	hits, err := m.b.Search(ctx, q.Text, q.Scopes, q.K)
	if err != nil {
		return nil, s, fmt.Errorf("memory %s: recall: %w", m.b.Name(), err)
	}
	ev := session.MemoryEvent{Op: session.MemoryRecall, Query: q.Text, Scopes: q.Scopes, K: q.K}
	for _, h := range hits {
		ev.Hits = append(ev.Hits, session.MemoryHit{URI: h.URI.String(), Score: h.Score, Hash: h.Hash(), Text: h.Content,
			Writer: h.Provenance.Session, Evidence: h.Provenance.Evidence, EvidenceKind: h.Provenance.Kind, Via: h.Via})
	}
	return hits, m.note(s, ev), nil
}

func (m *recorded) Forget(ctx context.Context, s *session.Session, sel Selector) (int, *session.Session, error) {
	if sel == (Selector{}) {
		return 0, s, fmt.Errorf("memory: a forget needs a selector")
	}
	var gone []URI
	for i, one := range sel.attempts(s) {
		g, err := m.delete(ctx, s, i, one)
		if err != nil {
			return 0, s, fmt.Errorf("memory %s: forget %s: %w", m.b.Name(), one, err)
		}
		gone = append(gone, g...)
	}
	// In one order whatever the backend's (a DELETE returns rows as they
	// lie), so that the record is the same for the same entries.
	slices.SortFunc(gone, func(a, b URI) int { return strings.Compare(a.String(), b.String()) })
	ev := session.MemoryEvent{Op: session.MemoryForget, Selector: sel.String(), Count: len(gone)}
	for _, u := range gone {
		ev.Forgotten = append(ev.Forgotten, u.String())
	}
	return len(gone), m.note(s, ev), nil
}

func (m *recorded) Commit(ctx context.Context, s *session.Session, o CommitOptions) (*session.Session, error) {
	var text strings.Builder
	var ids []session.ChunkID
	for _, msg := range s.Transcript() {
		fmt.Fprintf(&text, "%s: %s\n", msg.Role, msg.Content)
		if msg.Chunk != "" {
			ids = append(ids, msg.Chunk)
		}
	}
	// Named after the step's first attempt: a resumed step whose attempt
	// archived it but was cut before recording so archives it again, in
	// place.
	step := firstAttempt(s)
	archive := Entry{URI: URI{Scope: ScopeSession, ScopeID: string(step), Path: "transcript"}, Content: text.String(),
		Provenance: Provenance{Evidence: ids, Agent: o.Agent, Kind: EvidenceTranscript}}
	s, err := m.write(ctx, s, archive, session.MemoryCommit)
	if err != nil || o.Model == nil {
		return s, err
	}
	facts, err := extractFacts(ctx, o.Model, text.String())
	if err != nil {
		return s, fmt.Errorf("memory %s: commit: extract facts: %w", m.b.Name(), err)
	}
	scope, id, ok := strings.Cut(o.Scope, "/")
	if !ok {
		return s, fmt.Errorf("%w: commit scope %q is not scope/scope-id", ErrBadURI, o.Scope)
	}
	for i, f := range facts {
		e := Entry{URI: URI{Scope: scope, ScopeID: id, Path: fmt.Sprintf("facts/%s/%d", step, i+1)}, Content: f,
			Provenance: Provenance{Evidence: ids, Agent: o.Agent, Kind: EvidenceExtracted}}
		if s, err = m.write(ctx, s, e, session.MemoryCommit); err != nil {
			return s, err
		}
	}
	return s, nil
}

// extractFacts asks a model for the durable facts of a transcript, one per
// line.
func extractFacts(ctx context.Context, m model.Model, transcript string) ([]string, error) {
	resp, err := model.Generate(ctx, m, &model.Request{Messages: []session.Message{
		{Role: session.RoleSystem, Content: "List the durable facts worth remembering from this conversation, one per line, without numbering. Reply with nothing if there are none."},
		{Role: session.RoleUser, Content: transcript},
	}})
	if err != nil {
		return nil, err
	}
	var facts []string
	for _, line := range strings.Split(resp.Text, "\n") {
		if f := strings.TrimSpace(strings.TrimLeft(line, "-*• ")); f != "" {
			facts = append(facts, f)
		}
	}
	return facts, nil
}

func (m *recorded) Get(ctx context.Context, uri URI) (Entry, error) { return m.b.Get(ctx, uri) }

func (m *recorded) List(ctx context.Context, prefix string) ([]Entry, error) {
	return m.b.List(ctx, prefix)
}

func (m *recorded) Close() error { return m.b.Close() }

// firstAttempt is the session of the first attempt of s's step: s, unless
// it resumes interrupted attempts (session.Lineage.Resumes).
func firstAttempt(s *session.Session) session.ID {
	if rs := s.Lineage().Resumes(); len(rs) > 0 {
		return rs[len(rs)-1]
	}
	return s.ID()
}

// delete is the i-th delete of a forget through s: inside a workflow run,
// keyed by the run, s's step and s's length (OnceDeleter), so that the
// step made again — resumed — deletes once. Outside a run every forget
// deletes.
func (m *recorded) delete(ctx context.Context, s *session.Session, i int, sel Selector) ([]URI, error) {
	od, ok := m.b.(OnceDeleter)
	run := runctx.ID(ctx)
	if s == nil || !ok || run == "" {
		return m.b.Delete(ctx, sel)
	}
	return od.DeleteOnce(ctx, fmt.Sprintf("%s/%s/%d/%d %s", run, firstAttempt(s), s.Len(), i, sel), sel)
}
