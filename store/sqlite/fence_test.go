package sqlite

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Two stores on one file, as two worker processes would have: an Advance
// through one fences out the other's writer, whose writer has the session's
// head cached from its earlier commits.
func TestFenceAcrossStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rath.db")
	open := func() *Store {
		st, err := Open(t.Context(), Options{Path: path, Durability: store.Sync})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	taker, zombie := open(), open()
	ctx := t.Context()
	run := session.FromUser("run")
	if err := taker.Commit(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	e1, err := zombie.Advance(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	old := store.WithFence(ctx, store.Fence{Session: run.ID(), Epoch: e1})
	agent := run.Derive("agent:a", nil).Append(session.User("a"))
	next := agent.Append(session.User("b"))
	if err := zombie.Commit(old, agent, ""); err != nil {
		t.Fatal(err)
	}
	if err := zombie.Commit(old, next, agent.Head()); err != nil {
		t.Fatal(err)
	}
	e2, err := taker.Advance(ctx, run.ID())
	if err != nil || e2 != e1+1 {
		t.Fatalf("Advance through the other store = %d, %v; want %d", e2, err, e1+1)
	}
	late := next.Append(session.User("late"))
	if err := zombie.Commit(old, late, next.Head()); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("commit under the epoch another store superseded: %v", err)
	}
	if err := zombie.SetLabel(old, agent.ID(), "k", "v"); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("label under the epoch another store superseded: %v", err)
	}
	if e, err := zombie.Epoch(ctx, run.ID()); err != nil || e != e2 {
		t.Fatalf("Epoch through the fenced-out store = %d, %v; want %d", e, err, e2)
	}
	current := store.WithFence(ctx, store.Fence{Session: run.ID(), Epoch: e2})
	if err := taker.Commit(current, late, next.Head()); err != nil {
		t.Fatal(err)
	}
	if got, err := zombie.Load(ctx, agent.ID()); err != nil || got.Head() != late.Head() {
		t.Fatalf("after the new owner's commit: %v", err)
	}
}
