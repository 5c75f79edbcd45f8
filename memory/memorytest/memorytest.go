// Package memorytest is the conformance suite of memory backends:
// memorytest.Run(t, open) with a function returning a fresh, empty Memory.
package memorytest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// Run runs the suite.
func Run(t *testing.T, open func(t *testing.T) memory.Memory) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, m memory.Memory)
	}{
		{"RememberRecordsProvenance", testRemember},
		{"RecallRanksWithinScopes", testRecall},
		{"ForgetAndRollback", testForget},
		{"ForgetOnce", testForgetOnce},
		{"CommitArchivesAndExtracts", testCommit},
		{"ExplainFromSessionGraph", testExplain},
		{"BadInput", testBad},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := open(t)
			t.Cleanup(func() { m.Close() })
			c.fn(t, m)
		})
	}
}

var ctx = context.Background()

func uri(t *testing.T, s string) memory.URI {
	t.Helper()
	u, err := memory.ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func testRemember(t *testing.T, m memory.Memory) {
	s := session.FromUser("the build needs CGO_ENABLED=0")
	ev := s.Head()
	s2, err := m.Remember(ctx, s, memory.Entry{URI: uri(t, "memory://project/rath/build/cgo"), Content: "Build with CGO_ENABLED=0.",
		Provenance: memory.Provenance{Evidence: []session.ChunkID{ev}, Agent: "coder", Kind: memory.EvidenceHuman}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Get(ctx, uri(t, "memory://project/rath/build/cgo"))
	if err != nil || e.Content != "Build with CGO_ENABLED=0." || e.Provenance.Session != s.ID() || e.Provenance.Agent != "coder" ||
		e.Provenance.Kind != memory.EvidenceHuman || len(e.Provenance.Evidence) != 1 || e.Provenance.Evidence[0] != ev || e.Provenance.Time.IsZero() {
		t.Fatalf("entry = %+v, %v", e, err)
	}
	c := s2.Chunk(s2.Len() - 1)
	if c.Memory == nil || c.Memory.Op != session.MemoryRemember || c.Memory.URI != "memory://project/rath/build/cgo" ||
		c.Memory.ContentHash != memory.Hash("Build with CGO_ENABLED=0.") || len(c.Memory.Evidence) != 1 || c.Memory.EvidenceKind != memory.EvidenceHuman {
		t.Fatalf("remember chunk = %+v", c.Memory)
	}
	// Replacing keeps one entry.
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: uri(t, "memory://project/rath/build/cgo"), Content: "Build with CGO_ENABLED=1."}); err != nil {
		t.Fatal(err)
	}
	if es, _ := m.List(ctx, "memory://project/rath/"); len(es) != 1 || es[0].Content != "Build with CGO_ENABLED=1." {
		t.Fatalf("list = %+v", es)
	}
	if _, err := m.Get(ctx, uri(t, "memory://project/rath/none")); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("missing entry: %v", err)
	}
}

func testRecall(t *testing.T, m memory.Memory) {
	for u, c := range map[string]string{
		"memory://project/rath/a":  "The store uses SQLite in WAL mode with group commit.",
		"memory://project/rath/b":  "SQLite SQLite SQLite: the embedded database. WAL.",
		"memory://project/rath/c":  "Sandboxes run under bubblewrap.",
		"memory://project/other/x": "SQLite is used here too.",
		"memory://user/ann/cafe":   "Ann likes the café near the naïve art museum.",
	} {
		if _, err := m.Remember(ctx, nil, memory.Entry{URI: uri(t, u), Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	s := session.FromUser("q")
	hits, s2, err := m.Recall(ctx, s, memory.Query{Text: "sqlite wal", Scopes: []string{"project/rath"}, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Score < hits[1].Score || hits[0].Score <= 0 {
		t.Fatalf("hits = %+v", hits)
	}
	for _, h := range hits {
		if h.URI.ScopeKey() != "project/rath" {
			t.Fatalf("a hit outside the given scopes: %s", h.URI)
		}
	}
	c := s2.Chunk(s2.Len() - 1).Memory
	if c == nil || c.Op != session.MemoryRecall || c.Query != "sqlite wal" || len(c.Hits) != 2 ||
		c.Hits[0].URI != hits[0].URI.String() || c.Hits[0].Hash != memory.Hash(hits[0].Content) || c.Hits[0].Text == "" {
		t.Fatalf("recall chunk = %+v", c)
	}
	if hits, _, _ := m.Recall(ctx, nil, memory.Query{Text: "kubernetes helm", Scopes: []string{"project/rath"}}); len(hits) != 0 {
		t.Fatalf("no-match query returned %+v", hits)
	}
	if hits, _, _ := m.Recall(ctx, nil, memory.Query{Text: "cafe naive", Scopes: []string{"user/ann"}}); len(hits) != 1 {
		t.Fatalf("unicode folding: %+v", hits)
	}
	if _, _, err := m.Recall(ctx, nil, memory.Query{Text: "sqlite"}); !errors.Is(err, memory.ErrScope) {
		t.Fatalf("a recall without scopes: %v", err)
	}
	if hits, _, _ := m.Recall(ctx, nil, memory.Query{Text: `sqlite" OR "x* NEAR(`, Scopes: []string{"project/rath"}}); len(hits) == 0 {
		t.Fatal("query syntax in the text broke the recall")
	}
}

func testForget(t *testing.T, m memory.Memory) {
	run := session.FromUser("a run")
	other := session.FromUser("another run")
	s := run
	var err error
	for _, p := range []string{"x", "y"} {
		if s, err = m.Remember(ctx, s, memory.Entry{URI: uri(t, "memory://project/p/"+p), Content: "from the run " + p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Remember(ctx, other, memory.Entry{URI: uri(t, "memory://project/p/z"), Content: "from another run"}); err != nil {
		t.Fatal(err)
	}
	n, s, err := m.Forget(ctx, s, memory.DerivedFrom(run.ID()))
	if err != nil || n != 2 {
		t.Fatalf("rollback forgot %d, %v", n, err)
	}
	if c := s.Chunk(s.Len() - 1).Memory; c == nil || c.Op != session.MemoryForget || c.Count != 2 || !strings.Contains(c.Selector, string(run.ID())) ||
		!slices.Equal(sorted(c.Forgotten), []string{"memory://project/p/x", "memory://project/p/y"}) {
		t.Fatalf("forget chunk = %+v", c)
	}
	es, _ := m.List(ctx, "memory://project/p/")
	if len(es) != 1 || es[0].URI.Path != "z" {
		t.Fatalf("left = %+v", es)
	}
	if n, _, err := m.Forget(ctx, nil, memory.Selector{URI: "memory://project/p/z"}); err != nil || n != 1 {
		t.Fatalf("forget by URI: %d, %v", n, err)
	}
	if _, _, err := m.Forget(ctx, nil, memory.Selector{}); err == nil {
		t.Fatal("an empty selector forgot")
	}
}

func testCommit(t *testing.T, m memory.Memory) {
	s := session.FromUser("Our CI runs on Debian 12.").Append(session.Assistant("Noted: CI is Debian 12."))
	ext := scripted.New(model.Response{Text: "- CI runs on Debian 12\n\n- The team prefers table tests\n"})
	out, err := m.Commit(ctx, s, memory.CommitOptions{Scope: "project/rath", Model: ext, Agent: "scribe"})
	if err != nil {
		t.Fatal(err)
	}
	arch, err := m.Get(ctx, memory.URI{Scope: memory.ScopeSession, ScopeID: string(s.ID()), Path: "transcript"})
	if err != nil || !strings.Contains(arch.Content, "Debian 12") || len(arch.Provenance.Evidence) != 2 {
		t.Fatalf("archive = %+v, %v", arch, err)
	}
	facts, _ := m.List(ctx, "memory://project/rath/facts/")
	if len(facts) != 2 || facts[0].Content != "CI runs on Debian 12" || facts[0].Provenance.Kind != memory.EvidenceExtracted ||
		facts[0].Provenance.Session != s.ID() || len(facts[0].Provenance.Evidence) != 2 {
		t.Fatalf("facts = %+v", facts)
	}
	commits := 0
	for _, c := range out.All() {
		if c.Memory != nil && c.Memory.Op == session.MemoryCommit {
			commits++
		}
	}
	if commits != 3 {
		t.Fatalf("%d commit chunks, want 3", commits)
	}
	// Rolling back the run removes its archive and facts too.
	if n, _, _ := m.Forget(ctx, nil, memory.DerivedFrom(s.ID())); n != 3 {
		t.Fatalf("rollback of a commit forgot %d", n)
	}
}

func testBad(t *testing.T, m memory.Memory) {
	for _, bad := range []string{"http://x/y/z", "memory://planet/x/y", "memory://project//y", "memory://project/x/", "memory://project/x"} {
		if _, err := memory.ParseURI(bad); !errors.Is(err, memory.ErrBadURI) {
			t.Errorf("ParseURI(%q) = %v", bad, err)
		}
	}
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: memory.URI{Scope: "nope", ScopeID: "x", Path: "y"}, Content: "c"}); !errors.Is(err, memory.ErrBadURI) {
		t.Fatalf("bad scope: %v", err)
	}
	good := uri(t, "memory://project/p/bad")
	for name, e := range map[string]memory.Entry{
		"NUL in content":  {URI: good, Content: "a\x00b"},
		"bad evidence id": {URI: good, Content: "c", Provenance: memory.Provenance{Evidence: []session.ChunkID{"not-a-chunk"}}},
		"bad session id":  {URI: good, Content: "c", Provenance: memory.Provenance{Session: "nope"}},
	} {
		if _, err := m.Remember(ctx, nil, e); !errors.Is(err, memory.ErrBadEntry) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := m.Get(ctx, good); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("a refused entry was stored: %v", err)
	}
}

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// loader is a store of sessions by id, as store.Store.Load is.
type loader map[session.ID]*session.Session

func (l loader) Load(_ context.Context, id session.ID) (*session.Session, error) {
	if s, ok := l[id]; ok {
		return s, nil
	}
	return nil, errors.New("no such session")
}

// testExplain: a run that recalled a memory can say, from session graphs
// alone, why the memory was there and which chunks justified it — and that
// its writer later rolled it back.
func testExplain(t *testing.T, m memory.Memory) {
	const u = "memory://project/rath/build/cgo"
	writer := session.FromUser("the build needs CGO_ENABLED=0").Append(session.Assistant("I will remember that."))
	human := writer.Chunk(0).ID
	w, err := m.Remember(ctx, writer, memory.Entry{URI: uri(t, u), Content: "Build with CGO_ENABLED=0.",
		Provenance: memory.Provenance{Evidence: []session.ChunkID{human}, Agent: "coder", Kind: memory.EvidenceHuman}})
	if err != nil {
		t.Fatal(err)
	}
	wrote := w.Head()
	run := session.FromUser("how do I build?")
	_, run, err = m.Recall(ctx, run, memory.Query{Text: "build cgo", Scopes: []string{"project/rath"}, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	ls := loader{w.ID(): w}
	x, err := memory.Explain(ctx, ls, run, u)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Recalls) != 1 || x.Recalls[0].Index != run.Len()-1 || x.Recalls[0].Query != "build cgo" || x.Recalls[0].Score <= 0 ||
		x.Recalls[0].Hash != memory.Hash("Build with CGO_ENABLED=0.") {
		t.Fatalf("recalls = %+v", x.Recalls)
	}
	if len(x.Writes) != 1 {
		t.Fatalf("writes = %+v", x.Writes)
	}
	j := x.Writes[0]
	if j.Writer != w.ID() || j.Chunk != wrote || j.Op != session.MemoryRemember || j.Kind != memory.EvidenceHuman ||
		len(j.Evidence) != 1 || j.Evidence[0].ID != human || j.Evidence[0].User == nil || len(j.Missing) != 0 || j.Forgotten {
		t.Fatalf("justification = %+v", j)
	}
	// The writer rolls its writes back; the explanation says so.
	if _, w, err = m.Forget(ctx, w, memory.DerivedFrom(w.ID())); err != nil {
		t.Fatal(err)
	}
	ls[w.ID()] = w
	if x, err = memory.Explain(ctx, ls, run, u); err != nil || !x.Writes[0].Forgotten {
		t.Fatalf("after the rollback: %+v, %v", x, err)
	}
	if hits, _, _ := m.Recall(ctx, nil, memory.Query{Text: "build cgo", Scopes: []string{"project/rath"}}); len(hits) != 0 {
		t.Fatalf("recalled after the rollback: %+v", hits)
	}
	// Without the writer's session, the cited evidence is reported missing.
	if x, err := memory.Explain(ctx, nil, run, u); err != nil || len(x.Writes) != 1 || len(x.Writes[0].Missing) != 1 || x.Writes[0].Missing[0] != human {
		t.Fatalf("without a loader: %+v, %v", x, err)
	}
	if _, err := memory.Explain(ctx, ls, run, "memory://project/rath/other"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("an entry the run never saw: %v", err)
	}
}
