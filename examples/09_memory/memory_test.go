package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"

	example "github.com/openrath/rath/examples/09_memory"
)

func TestMemory(t *testing.T) {
	ctx := context.Background()
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	// Twice on one home: each run works in its own scope, so the second
	// starts as clean as the first.
	for range 2 {
		out, err := rt.Run(ctx, example.Name)
		if err != nil {
			t.Fatal(err)
		}
		check(t, rt, out)
	}
}

func check(t *testing.T, rt *rath.Runtime, out *session.Session) {
	ctx := context.Background()
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}
	load := func(id session.ID) *session.Session {
		s, err := rt.Store.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The output merges the three runs: (run 1 + run 2) + run 3.
	lin := out.Lineage()
	if lin.Kind != session.LineageMerge || len(lin.Parents) != 2 {
		t.Fatalf("lineage %+v", lin)
	}
	both := load(lin.Parents[0]).Lineage()
	if len(both.Parents) != 2 {
		t.Fatalf("lineage of the first merge %+v", both)
	}
	run1, run2, run3 := load(both.Parents[0]), load(both.Parents[1]), load(lin.Parents[1])
	for i, r := range []*session.Session{run1, run2, run3} {
		if want := []string{"learn/agent:builder#1", "recall/agent:helper#1", "after-rollback/agent:helper#1"}[i]; r.Lineage().Op != want {
			t.Fatalf("run %d is %s", i+1, r.Lineage().Op)
		}
	}
	// Every chunk of the three runs is in the output, in order.
	if out.Len() != run1.Len()+run2.Len()+run3.Len()+5 {
		t.Fatalf("output of %d chunks from runs of %d, %d and %d", out.Len(), run1.Len(), run2.Len(), run3.Len())
	}
	mem, err := rt.Memory(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Run 1 remembered the rule, citing the correction and the build.
	var remember, forget *session.MemoryEvent
	byID := map[session.ChunkID]session.Chunk{}
	for _, c := range run1.All() {
		byID[c.ID] = c
		if m := c.Memory; m != nil {
			switch m.Op {
			case session.MemoryRemember:
				remember = m
			case session.MemoryForget:
				forget = m
			}
		}
	}
	if remember == nil || remember.URI != "memory://"+example.Scope(out)+"/"+example.Path || remember.EvidenceKind != memory.EvidenceHuman || len(remember.Evidence) != 2 {
		t.Fatalf("remember chunk %+v", remember)
	}
	uri := remember.URI
	fix, built := byID[remember.Evidence[0]], byID[remember.Evidence[1]]
	if fix.User == nil || !strings.Contains(fix.User.Text, "no C compiler") || built.ToolResult == nil || !strings.Contains(built.ToolResult.Content, "exit code 0") {
		t.Fatalf("evidence: %+v, %+v", fix, built)
	}
	if remember.ContentHash != memory.Hash("Release builds of rath must use CGO_ENABLED=0: the release image has no C compiler, so a cgo build fails there.") {
		t.Fatalf("content hash %s", remember.ContentHash)
	}

	// Run 2, a new conversation, recalled it, with its provenance, and used it.
	hits := recall(t, run2)
	if len(hits) != 1 || hits[0].URI != uri || hits[0].Writer != run1.ID() || hits[0].EvidenceKind != memory.EvidenceHuman || hits[0].Score <= 0 {
		t.Fatalf("run 2 hits %+v", hits)
	}
	if !strings.Contains(answer(t, run2), "run: CGO_ENABLED=0 go build") {
		t.Fatalf("run 2 answered %q", answer(t, run2))
	}

	// Explain, from the graph: why it was there, and what justified it.
	x, err := memory.Explain(ctx, rt.Store, run2, uri)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Recalls) != 1 || x.Recalls[0].Query != "Write the CI step that builds the release binary of rath." || len(x.Writes) != 1 {
		t.Fatalf("explanation %+v", x)
	}
	w := x.Writes[0]
	if w.Writer != run1.ID() || w.Op != session.MemoryRemember || w.Chunk == "" || byID[w.Chunk].Memory != remember ||
		len(w.Evidence) != 2 || w.Evidence[0].ID != fix.ID || w.Evidence[1].ID != built.ID || len(w.Missing) != 0 {
		t.Fatalf("justification %+v", w)
	}

	// The rollback removed what run 1 wrote (the rule and its transcript
	// archive), nothing else; Explain says so.
	if forget == nil || forget.Count != 2 || forget.Selector != "derived_from="+string(run1.ID()) ||
		!contains(forget.Forgotten, uri) || !contains(forget.Forgotten, "memory://session/"+string(run1.ID())+"/transcript") {
		t.Fatalf("forget chunk %+v", forget)
	}
	if !w.Forgotten {
		t.Fatal("Explain does not report the rollback")
	}
	if _, err := mem.Get(ctx, memory.MustParseURI(uri)); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the rule is still in memory: %v", err)
	}
	if _, err := mem.Get(ctx, memory.URI{Scope: memory.ScopeSession, ScopeID: string(run2.ID()), Path: "transcript"}); err != nil {
		t.Fatalf("run 2's archive was rolled back with run 1's writes: %v", err)
	}

	// Run 3, the same question after the rollback, recalled nothing.
	if hits := recall(t, run3); len(hits) != 0 {
		t.Fatalf("run 3 hits %+v", hits)
	}
	if a := answer(t, run3); strings.Contains(a, "CGO_ENABLED=0") || !strings.Contains(a, "Nothing in memory") {
		t.Fatalf("run 3 answered %q", a)
	}

	// Deterministic: the replay serves every model call and every memory
	// operation from the record — it neither recalls from memory as it is
	// now (rolled back) nor writes the rule again — and repeats the head.
	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Fatalf("replay head %s, recorded %s", again.Head(), out.Head())
	}
	if _, err := mem.Get(ctx, memory.MustParseURI(uri)); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the replay wrote the rule again: %v", err)
	}

	// The output is run 1 and the notes telling each step.
	var notes []string
	for _, c := range out.All() {
		if c.Note != nil {
			notes = append(notes, c.Note.Text)
		}
	}
	want := []string{"remembered " + uri, "recalled 1 entry", "justified by human_correction evidence loaded from the store", "removed the 2 entries run 1 wrote", "recalled 0 entries"}
	if len(notes) != len(want) {
		t.Fatalf("notes %q", notes)
	}
	for i, n := range notes {
		if !strings.Contains(n, want[i]) {
			t.Fatalf("note %d lacks %q: %s", i, want[i], n)
		}
	}
}

func recall(t *testing.T, run *session.Session) []session.MemoryHit {
	t.Helper()
	for _, c := range run.All() {
		if m := c.Memory; m != nil && m.Op == session.MemoryRecall {
			return m.Hits
		}
	}
	t.Fatalf("%s has no recall chunk", run.ID())
	return nil
}

func answer(t *testing.T, run *session.Session) string {
	t.Helper()
	for i := run.Len() - 1; i >= 0; i-- {
		if a := run.Chunk(i).Assistant; a != nil {
			return a.Text
		}
	}
	t.Fatalf("%s has no answer", run.ID())
	return ""
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
