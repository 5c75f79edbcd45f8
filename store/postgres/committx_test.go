package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func openStore(t *testing.T, dbURL string) *Store {
	t.Helper()
	st, err := Open(t.Context(), Options{URL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// nextEvent returns the next Watch event, failing after 10 s.
func nextEvent(t *testing.T, events <-chan store.Event) store.Event {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return store.Event{}
	}
}

// A commit and the caller's own row go in one transaction: both or neither,
// and the commit's event fires only if it commits.
func TestCommitTx(t *testing.T) {
	st := openStore(t, freshDB(t))
	ctx := t.Context()
	if _, err := st.Pool().Exec(ctx, `CREATE TABLE jobs(session text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	events, err := st.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jobs := func(id session.ID) (n int) {
		t.Helper()
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM jobs WHERE session = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// commitWithJob commits s and enqueues a job for it in one transaction,
	// then commits or rolls back that transaction.
	commitWithJob := func(s *session.Session, prev session.ChunkID, keep bool) {
		t.Helper()
		tx, err := st.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if err := st.CommitTx(ctx, tx, s, prev); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO jobs(session) VALUES($1) ON CONFLICT DO NOTHING`, s.ID()); err != nil {
			t.Fatal(err)
		}
		// Not visible outside the transaction yet.
		if info, err := st.Info(ctx, s.ID()); err == nil && info.Head == s.Head() {
			t.Fatal("a commit in an open transaction is visible outside it")
		}
		if keep {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	s := session.FromUser("submitted")
	commitWithJob(s, "", true)
	if info, err := st.Info(ctx, s.ID()); err != nil || info.Head != s.Head() || jobs(s.ID()) != 1 {
		t.Fatalf("after the transaction committed: %+v, %v, %d jobs", info, err, jobs(s.ID()))
	}
	if ev := nextEvent(t, events); ev.ID != s.ID() || ev.Head != s.Head() {
		t.Fatalf("event %+v, want the commit of %s", ev, s.ID())
	}

	// Rolled back: neither the commit nor the row, nor its event.
	rolled := session.FromUser("rolled back")
	commitWithJob(rolled, "", false)
	s2 := s.Append(session.User("rolled back too"))
	commitWithJob(s2, s.Head(), false)
	if _, err := st.Info(ctx, rolled.ID()); !errors.Is(err, store.ErrNotFound) || jobs(rolled.ID()) != 0 {
		t.Fatalf("a rolled-back new session: %v, %d jobs", err, jobs(rolled.ID()))
	}
	if info, err := st.Info(ctx, s.ID()); err != nil || info.Head != s.Head() {
		t.Fatalf("a rolled-back append moved the head: %+v, %v", info, err)
	}
	s3 := s.Append(session.User("committed"))
	if err := st.Commit(ctx, s3, s.Head()); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); ev.Head != s3.Head() {
		t.Fatalf("event %+v after two rolled-back commits, want the commit of %s", ev, s3.Head().Short())
	}

	// The checks are Commit's: a head conflict, and a fence. Both are
	// decided before any write and leave the transaction usable.
	e, err := st.Advance(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := st.CommitTx(ctx, tx, s.Append(session.User("stale")), s.Head()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("CommitTx on a moved head: %v", err)
	}
	stale := store.WithFence(ctx, store.Fence{Session: s.ID(), Epoch: e - 1})
	if err := st.CommitTx(stale, tx, s3.Append(session.User("zombie")), s3.Head()); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("CommitTx under a superseded fence: %v", err)
	}
	current := store.WithFence(ctx, store.Fence{Session: s.ID(), Epoch: e})
	s4 := s3.Append(session.User("owner"))
	if err := st.CommitTx(current, tx, s4, s3.Head()); err != nil {
		t.Fatalf("CommitTx under the current fence, after refusals in the same transaction: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Load(ctx, s.ID()); err != nil || got.Head() != s4.Head() {
		t.Fatalf("after the fenced CommitTx: %v", err)
	}
}
