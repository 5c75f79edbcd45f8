package replay_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/local"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A resumed step's session says which interrupted attempt it continues,
// and a forget of what it wrote, recorded in it, rolls back what that
// attempt wrote too: the attempt's memory write is on the resumed record
// (replayed, not made again) and names the attempt as its writer.
func TestResumedStepNamesItsAttempt(t *testing.T) {
	c := newStopCase(t, false)
	if _, err := c.run(t, 50*time.Millisecond, time.Minute); !errors.Is(err, runctx.ErrInterrupted) {
		t.Fatalf("the stopped run: %v", err)
	}
	attempt := c.stored(t)
	out, err := replay.Resume(runctx.WithReview(context.Background()), c.wf, c.st, c.in.ID())
	if err != nil {
		t.Fatal(err)
	}
	infos, err := c.st.List(context.Background(), store.Filter{Labels: map[string]string{runctx.Label: string(c.in.ID())}})
	if err != nil {
		t.Fatal(err)
	}
	var resumed *store.Info
	for i := range infos {
		if infos[i].ID != attempt.ID() && infos[i].Lineage.Op == attempt.Lineage().Op {
			resumed = &infos[i]
		}
	}
	if resumed == nil {
		t.Fatalf("no resumed session of step %s among %d (output %s)", attempt.Lineage().Op, len(infos), out.ID())
	}
	if got := resumed.Lineage.Resumes(); !slices.Equal(got, []session.ID{attempt.ID()}) {
		t.Fatalf("the resumed step's session resumes %v, want [%s]", got, attempt.ID())
	}
	if got := attempt.Lineage().Resumes(); got != nil {
		t.Fatalf("the first attempt resumes %v", got)
	}

	// What the attempt wrote is forgotten through the resumed session.
	mem, err := local.Open(context.Background(), t.TempDir()+"/m.db")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	uri := memory.URI{Scope: memory.ScopeProject, ScopeID: "p", Path: "rule"}
	wrote, err := mem.Remember(context.Background(), attempt, memory.Entry{URI: uri, Content: "written by the attempt"})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.st.Load(context.Background(), resumed.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The resumed step carries the attempt's record of the write, as a
	// replay serves it (memory left alone).
	served := *wrote.Chunk(wrote.Len() - 1).Memory
	prev := rs.Head()
	rs = rs.Append(session.Of(&served))
	if err := c.st.Commit(context.Background(), rs, prev); err != nil {
		t.Fatal(err)
	}
	// Another run recalls it: the hit names the attempt as its writer.
	_, reader, err := mem.Recall(context.Background(), session.FromUser("what was written?"),
		memory.Query{Text: "written attempt", Scopes: []string{"project/p"}})
	if err != nil || reader.Chunk(reader.Len()-1).Memory == nil || len(reader.Chunk(reader.Len()-1).Memory.Hits) != 1 {
		t.Fatalf("recall: %v", err)
	}
	n, rec, err := mem.Forget(context.Background(), rs, memory.DerivedFrom(rs.ID()))
	if err != nil || n != 1 {
		t.Fatalf("forget through the resumed session: %d, %v; want 1", n, err)
	}
	if _, err := mem.Get(context.Background(), uri); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the attempt's entry after the forget: %v", err)
	}
	// Explain reads the resumed step in the attempt's place: it holds the
	// write (replayed) and the forget.
	if err := c.st.Commit(context.Background(), rec, rs.Head()); err != nil {
		t.Fatal(err)
	}
	x, err := memory.Explain(context.Background(), c.st, reader, uri.String())
	if err != nil || len(x.Writes) != 1 {
		t.Fatalf("explain: %+v, %v", x, err)
	}
	if w := x.Writes[0]; w.Writer != attempt.ID() || w.Resumed != rs.ID() || !w.Forgotten {
		t.Fatalf("explain's write: writer %s resumed %s forgotten %v; want %s, %s, true", w.Writer, w.Resumed, w.Forgotten, attempt.ID(), rs.ID())
	}
	// Recorded as an uninterrupted run records it: the selector as given.
	if ev := rec.Chunk(rec.Len() - 1).Memory; ev == nil || ev.Count != 1 || ev.Selector != memory.DerivedFrom(rs.ID()).String() {
		t.Fatalf("the recorded forget: %+v", ev)
	}
}
