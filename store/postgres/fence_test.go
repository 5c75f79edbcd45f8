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

// AdvanceInfo takes the next epoch and reads the session under it, labels
// included; a session the store does not have is not found.
func TestAdvanceInfo(t *testing.T) {
	st := openStore(t, freshDB(t))
	ctx := t.Context()
	s := session.FromUser("taken")
	if err := st.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabel(ctx, s.ID(), "owner", "w1"); err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 3; want++ {
		info, err := st.AdvanceInfo(ctx, s.ID())
		if err != nil {
			t.Fatal(err)
		}
		if info.Epoch != want || info.Labels["owner"] != "w1" || info.Head != s.Head() {
			t.Fatalf("AdvanceInfo = epoch %d, labels %v, head %s; want epoch %d, owner w1, head %s", info.Epoch, info.Labels, info.Head.Short(), want, s.Head().Short())
		}
	}
	if _, err := st.AdvanceInfo(ctx, session.NewID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AdvanceInfo of an unknown session: %v, want ErrNotFound", err)
	}
}

// An AdvanceInfo that waits for a writer under the old epoch reads what
// that writer committed: the read is not on a snapshot from before it
// waited.
func TestAdvanceInfoSeesTheWriterItWaitedFor(t *testing.T) {
	st := openStore(t, freshDB(t))
	ctx := t.Context()
	s := session.FromUser("contested")
	if err := st.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	e, err := st.Advance(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	old := store.WithFence(ctx, store.Fence{Session: s.ID(), Epoch: e})
	if err := st.SetLabelsTx(old, tx, s.ID(), map[string]string{"last": "old owner"}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		info store.Info
		err  error
	}
	done := make(chan result, 1)
	go func() {
		info, err := st.AdvanceInfo(ctx, s.ID())
		done <- result{info, err}
	}()
	// Wait until the advance is blocked on the writer's row lock.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the advance never waited for the writer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.info.Epoch != e+1 || r.info.Labels["last"] != "old owner" {
		t.Fatalf("AdvanceInfo after waiting = epoch %d, labels %v; want epoch %d and the old owner's label", r.info.Epoch, r.info.Labels, e+1)
	}
}
