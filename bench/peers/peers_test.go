package main

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

// both are the two sides' runners of s in memory, with their tallies.
func both(t *testing.T, s script) (eino, ours runner, te, to *tally) {
	t.Helper()
	te, to = new(tally), new(tally)
	eino, err := einoAgent(t.Context(), s, te)
	if err != nil {
		t.Fatal(err)
	}
	a, err := oursAgent(s, to, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return eino, oursRunner(a), te, to
}

// wantTally fails unless t counted exactly runs runs of s.
func wantTally(t *testing.T, side string, got *tally, s script, runs int) {
	t.Helper()
	if m, c := got.model.Load(), got.tool.Load(); m != int64(runs*s.steps()) || c != int64(runs*s.calls) {
		t.Errorf("%s: %d model calls and %d tool calls, want %d and %d", side, m, c, runs*s.steps(), runs*s.calls)
	}
}

func TestShortRuns(t *testing.T) {
	s := script{calls: 3}
	eino, ours, te, to := both(t, s)
	for side, run := range map[string]runner{"eino": eino, "ours": ours} {
		if _, err := sequential(t.Context(), run, 4); err != nil {
			t.Fatalf("%s: %v", side, err)
		}
	}
	wantTally(t, "eino", te, s, 4)
	wantTally(t, "ours", to, s, 4)
}

func TestLongRun(t *testing.T) {
	s := script{calls: 60} // well past Eino's default step limit of 12
	eino, ours, te, to := both(t, s)
	for side, run := range map[string]runner{"eino": eino, "ours": ours} {
		if _, err := sequential(t.Context(), run, 1); err != nil {
			t.Fatalf("%s: %v", side, err)
		}
	}
	wantTally(t, "eino", te, s, 1)
	wantTally(t, "ours", to, s, 1)
}

// TestOursSession: a run's session holds the user message, three chunks a
// step (model call, assistant turn, tool result) and the answer's two.
func TestOursSession(t *testing.T) {
	s := script{calls: 5}
	a, err := oursAgent(s, new(tally), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Forward(t.Context(), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	wantChunks(t, out, s)
}

// wantChunks fails unless out is the session of one run of s.
func wantChunks(t *testing.T, out *session.Session, s script) {
	t.Helper()
	kinds := map[session.Kind]int{}
	for _, c := range out.All() {
		kinds[c.Kind]++
	}
	want := map[session.Kind]int{session.KindUser: 1, session.KindModelCall: s.steps(), session.KindAssistant: s.steps(), session.KindToolResult: s.calls}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s chunks, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	if got := out.Len(); got != 1+3*s.calls+2 {
		t.Errorf("%d chunks, want %d", got, 1+3*s.calls+2)
	}
	if got, err := answer(out); err != nil || got != finalAnswer {
		t.Errorf("answer %q, %v; want %q", got, err, finalAnswer)
	}
}

// TestDurableOurs: the run's session is in the store, whole, after one
// commit per step with the idempotent tool and two without.
func TestDurableOurs(t *testing.T) {
	s := script{calls: 4}
	for _, c := range []struct {
		idempotent bool
		perStep    int
	}{{true, 1}, {false, 2}} {
		ctx := t.Context()
		st := &countingStore{Store: openStore(t)}
		a, err := oursAgent(s, new(tally), st, c.idempotent)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Forward(ctx, session.FromUser("go"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Load(ctx, out.ID())
		if err != nil {
			t.Fatalf("the run's session is not in the store: %v", err)
		}
		if got.Head() != out.Head() {
			t.Errorf("stored head %s, want the run's %s", got.Head(), out.Head())
		}
		wantChunks(t, got, s)
		if err := st.Verify(ctx, out.ID()); err != nil {
			t.Error(err)
		}
		// The first commit, the steps', the answer's.
		if want := 1 + c.perStep*s.calls + 1; int(st.commits.Load()) != want {
			t.Errorf("idempotent %v: %d commits, want %d", c.idempotent, st.commits.Load(), want)
		}
	}
}

// countingStore counts the commits that reach its store.
type countingStore struct {
	store.Store
	commits atomic.Int64
}

func (c *countingStore) Commit(ctx context.Context, s *session.Session, prev session.ChunkID) error {
	c.commits.Add(1)
	return c.Store.Commit(ctx, s, prev)
}

// TestDurableEino: one checkpoint written per step, under the run's id, and
// the run still ends with the answer.
func TestDurableEino(t *testing.T) {
	s := script{calls: 4}
	cps, te := newCheckPoints(), new(tally)
	run, err := einoCheckpointed(t.Context(), s, te, cps)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sequential(t.Context(), run, 3); err != nil {
		t.Fatal(err)
	}
	wantTally(t, "eino", te, s, 3)
	if got := cps.sets.Load(); got != int64(3*s.calls) {
		t.Errorf("%d checkpoints written, want %d", got, 3*s.calls)
	}
	for _, id := range []string{"run-1", "run-2", "run-3"} {
		if b, ok, _ := cps.Get(t.Context(), id); !ok || len(b) == 0 {
			t.Errorf("no checkpoint under %s", id)
		}
	}
}

func TestFanout(t *testing.T) {
	s := script{calls: 4, latency: time.Millisecond}
	eino, ours, te, to := both(t, s)
	for side, run := range map[string]runner{"eino": eino, "ours": ours} {
		if _, err := concurrent(t.Context(), run, 50); err != nil {
			t.Fatalf("%s: %v", side, err)
		}
	}
	wantTally(t, "eino", te, s, 50)
	wantTally(t, "ours", to, s, 50)
}

func TestFanoutDurable(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	s := script{calls: 4, latency: time.Millisecond}
	to := new(tally)
	a, err := oursAgent(s, to, st, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := concurrent(ctx, oursRunner(a), 40); err != nil {
		t.Fatal(err)
	}
	wantTally(t, "ours", to, s, 40)
	infos, err := st.List(ctx, store.Filter{Op: "agent:bench"})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 40 {
		t.Fatalf("%d agent sessions stored, want 40", len(infos))
	}
	for _, in := range infos {
		if in.Len != 1+3*s.calls+2 {
			t.Errorf("session %s has %d chunks, want %d", in.ID, in.Len, 1+3*s.calls+2)
		}
	}
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "t.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}
