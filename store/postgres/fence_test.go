package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The fence's row lock orders Advance and fenced writes: an Advance waits
// for a fenced write in flight, and a fenced write waits for an Advance in
// flight and then sees its epoch.
func TestFenceLocks(t *testing.T) {
	dbURL := freshDB(t)
	st, other := openStore(t, dbURL), openStore(t, dbURL)
	ctx := t.Context()
	run := session.FromUser("run")
	if err := st.Commit(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	fence := store.WithFence(ctx, store.Fence{Session: run.ID(), Epoch: 0})
	const settle = 300 * time.Millisecond

	// A fenced commit holds the run until its transaction ends.
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	agent := run.Derive("agent:a", nil).Append(session.User("a"))
	if err := st.CommitTx(fence, tx, agent, ""); err != nil {
		t.Fatal(err)
	}
	advanced := make(chan error, 1)
	go func() { _, err := other.Advance(ctx, run.ID()); advanced <- err }()
	select {
	case err := <-advanced:
		t.Fatalf("Advance returned (%v) while a write under the old epoch was in flight", err)
	case <-time.After(settle):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-advanced; err != nil {
		t.Fatal(err)
	}

	// An Advance in flight holds fenced writes back; they then fail.
	tx, err = other.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `UPDATE rath.sessions SET epoch = epoch + 1 WHERE id = $1`, run.ID()); err != nil {
		t.Fatal(err)
	}
	current := store.WithFence(ctx, store.Fence{Session: run.ID(), Epoch: 1})
	committed := make(chan error, 1)
	go func() {
		committed <- st.Commit(current, agent.Append(session.User("b")), agent.Head())
	}()
	select {
	case err := <-committed:
		t.Fatalf("a fenced commit returned (%v) while an Advance was in flight", err)
	case <-time.After(settle):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-committed; !errors.Is(err, store.ErrFenced) {
		t.Fatalf("fenced commit after a concurrent Advance: %v", err)
	}
	if e, err := st.Epoch(ctx, run.ID()); err != nil || e != 2 {
		t.Fatalf("Epoch = %d, %v; want 2", e, err)
	}
}
