// Package memorytest is the conformance suite of memory backends:
// memorytest.Run(t, open) with a function returning a fresh, empty Memory.
package memorytest

import (
	"context"
	"errors"
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
		{"CommitArchivesAndExtracts", testCommit},
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
	if c := s.Chunk(s.Len() - 1).Memory; c == nil || c.Op != session.MemoryForget || c.Count != 2 || !strings.Contains(c.Selector, string(run.ID())) {
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
}
