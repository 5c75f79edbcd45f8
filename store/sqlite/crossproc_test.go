package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Two Stores opened on one file are two sets of connections, as two
// processes would have: each store's watchers see the other's writes
// through the change log.

// waitFor bounds every wait of these tests: generous, for a loaded machine.
const waitFor = 10 * time.Second

func openPair(t *testing.T) (a, b *Store, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "rath.db")
	return openAt(t, path), openAt(t, path), path
}

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	st, err := Open(t.Context(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func watch(t *testing.T, st *Store) <-chan store.Event {
	t.Helper()
	ch, err := st.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// next returns the next event, failing after waitFor.
func next(t *testing.T, ch <-chan store.Event) store.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(waitFor):
		t.Fatalf("no event within %v", waitFor)
	}
	return store.Event{}
}

// expect takes the next event and checks it reports s (a commit, or a label
// write when labels is set), without Missed.
func expect(t *testing.T, ch <-chan store.Event, s *session.Session, labels bool) store.Event {
	t.Helper()
	ev := next(t, ch)
	want := store.Event{ID: s.ID(), Head: s.Head(), Len: s.Len(), Labels: labels}
	if ev != want {
		t.Fatalf("event %+v, want %+v", ev, want)
	}
	return ev
}

func commit(t *testing.T, st store.Store, s *session.Session, prev session.ChunkID) {
	t.Helper()
	if err := st.Commit(t.Context(), s, prev); err != nil {
		t.Fatal(err)
	}
}

// A watcher on A sees B's commits with the head and length B stored, and
// B's label writes, and reads them on receipt.
func TestWatchSeesOtherStore(t *testing.T) {
	a, b, _ := openPair(t)
	events := watch(t, a)

	s := session.FromUser("written by B")
	commit(t, b, s, "")
	s2 := s.Append(session.User("again"), session.User("and again"))
	commit(t, b, s2, s.Head())
	if err := b.SetLabels(t.Context(), s.ID(), map[string]string{"state": "running"}); err != nil {
		t.Fatal(err)
	}

	expect(t, events, s, false)
	expect(t, events, s2, false)
	if info, err := a.Info(t.Context(), s.ID()); err != nil || info.Head != s2.Head() {
		t.Fatalf("Info on receipt: %+v, %v; want head %s", info, err, s2.Head().Short())
	}
	expect(t, events, s2, true)
	if info, err := a.Info(t.Context(), s.ID()); err != nil || info.Labels["state"] != "running" {
		t.Fatalf("Info on receipt of the label event: %+v, %v", info, err)
	}
}

// A store's own writes reach its watchers once: from its writer, not again
// from its poller. B's marker commit, logged after A's writes, arrives
// only after the poller read past them.
func TestWatchOwnWritesOnce(t *testing.T) {
	a, b, _ := openPair(t)
	onA, onB := watch(t, a), watch(t, b)

	s := session.FromUser("written by A")
	commit(t, a, s, "")
	s2 := s.Append(session.User("more"))
	commit(t, a, s2, s.Head())
	if err := a.SetLabel(t.Context(), s.ID(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	marker := session.FromUser("written by B")
	commit(t, b, marker, "")

	// A's own events come from its writer, at once; B's marker after the
	// poll that read A's rows too: a duplicate would come before it.
	expect(t, onA, s, false)
	expect(t, onA, s2, false)
	expect(t, onA, s2, true)
	expect(t, onA, marker, false)
	// B publishes its marker at once, then A's writes from its poll.
	expect(t, onB, marker, false)
	expect(t, onB, s, false)
	expect(t, onB, s2, false)
	expect(t, onB, s2, true)
	// And nothing more: one more write, and it is the next event on both.
	last := session.FromUser("the end")
	commit(t, a, last, "")
	expect(t, onA, last, false)
	expect(t, onB, last, false)
}

// pollerRunning reports whether a poller goroutine runs in this process.
func pollerRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "(*poller).run")
}

// waitUntil waits, up to waitFor, for cond.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", waitFor, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Nothing polls without watchers: the poller starts with the first
// watcher, stops with the last, and Close stops it and leaves no
// goroutine behind.
func TestPollerRunsOnlyWhileWatched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rath.db")
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	st, err := Open(t.Context(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if pollerRunning() {
		t.Fatal("a poller runs before any Watch")
	}
	ctx1, cancel1 := context.WithCancel(t.Context())
	ctx2, cancel2 := context.WithCancel(t.Context())
	for _, ctx := range []context.Context{ctx1, ctx2} {
		if _, err := st.Watch(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "a poller runs while watched", pollerRunning)
	cancel1()
	time.Sleep(2 * pollInterval) // room for a wrong stop to happen
	if !pollerRunning() {
		t.Fatal("the poller stopped while a watcher remains")
	}
	cancel2()
	waitUntil(t, "the poller stops after the last watcher", func() bool { return !pollerRunning() })

	// Watched again, then closed while watched.
	if _, err := st.Watch(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a poller runs while watched again", pollerRunning)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if pollerRunning() {
		t.Fatal("the poller outlives Close")
	}
	if _, err := st.Watch(t.Context()); err == nil {
		t.Fatal("Watch after Close succeeded")
	}
}

// rawDB opens the file as another program would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// A poll that fails (here the change log is gone from the file) is tried
// again on the next tick: the poller neither stops nor crashes, and once
// the file is whole again, events flow, the first one marked Missed.
func TestPollerOutlivesFailingPolls(t *testing.T) {
	a, b, path := openPair(t)
	events := watch(t, a)
	var s *session.Session
	for range 3 {
		s = session.FromUser("before the damage")
		commit(t, b, s, "")
		expect(t, events, s, false)
	}
	raw := rawDB(t, path)
	mustExec(t, raw, `ALTER TABLE changes RENAME TO changes_away`)
	before := a.watch.errs.Load()
	waitUntil(t, "two failed polls", func() bool { return a.watch.errs.Load() >= before+2 })
	if !pollerRunning() {
		t.Fatal("the poller stopped after failing")
	}
	// The table comes back empty: the log went back (its seq restarts
	// below the poller's), and the poller reads the new log from its
	// start, telling watchers they may have missed events.
	mustExec(t, raw, `DROP TABLE changes_away`)
	mustExec(t, raw, `CREATE TABLE changes(seq INTEGER PRIMARY KEY, origin INTEGER NOT NULL, events BLOB NOT NULL)`)
	s1, s2 := session.FromUser("after the repair"), session.FromUser("and after that")
	commit(t, b, s1, "")
	commit(t, b, s2, "")
	if ev := next(t, events); ev.ID != s1.ID() || ev.Head != s1.Head() || !ev.Missed {
		t.Fatalf("first event after the repair %+v, want %s with Missed", ev, s1.ID())
	}
	expect(t, events, s2, false)
}

// A change-log row that does not decode is skipped; the watcher is told
// it missed events, and later rows are delivered.
func TestPollerSkipsDamagedRow(t *testing.T) {
	a, b, path := openPair(t)
	events := watch(t, a)
	mustExec(t, rawDB(t, path), `INSERT INTO changes(origin, events) VALUES(7, x'01ff')`)
	s := session.FromUser("after the damage")
	commit(t, b, s, "")
	ev := next(t, events)
	if ev.ID != s.ID() || ev.Head != s.Head() || ev.Len != 1 || !ev.Missed {
		t.Fatalf("event %+v, want %s with Missed", ev, s.ID())
	}
}

// Rows pruned before a poller read them show as a gap in seq: the next
// event is marked Missed.
func TestPollerReportsPrunedRows(t *testing.T) {
	a, b, path := openPair(t)
	// A poller driven by hand, and a watcher without a running poller.
	p, err := a.newPoller(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	events := a.hub.Subscribe(t.Context())
	s1, s2, s3 := session.FromUser("pruned"), session.FromUser("after the gap"), session.FromUser("last")
	for _, s := range []*session.Session{s1, s2, s3} {
		commit(t, b, s, "")
	}
	mustExec(t, rawDB(t, path), `DELETE FROM changes WHERE seq = ?`, p.last+1)
	if err := p.poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, events); ev.ID != s2.ID() || !ev.Missed {
		t.Fatalf("event %+v, want %s with Missed", ev, s2.ID())
	}
	expect(t, events, s3, false)
}

// The writer keeps the change log to about keepChanges rows.
func TestChangeLogIsPruned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rath.db")
	st, err := Open(t.Context(), Options{Path: path, Durability: store.Exit})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	watch(t, openAt(t, path)) // so that st logs
	s := session.FromUser("many commits")
	commit(t, st, s, "")
	var last int64
	for last < keepChanges+2*pruneEvery {
		for range 100 {
			s2 := s.Append(session.Note("n"))
			commit(t, st, s2, s.Head())
			s = s2
		}
		if err := st.read(t.Context(), func(tx *sql.Tx) error {
			return tx.QueryRow(`SELECT max(seq) FROM changes`).Scan(&last)
		}); err != nil {
			t.Fatal(err)
		}
	}
	var n, first int64
	if err := st.read(t.Context(), func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT count(*), min(seq) FROM changes`).Scan(&n, &first)
	}); err != nil {
		t.Fatal(err)
	}
	if n > keepChanges+pruneEvery || first != last-n+1 {
		t.Fatalf("%d rows from %d to %d, want at most %d, contiguous", n, first, last, keepChanges+pruneEvery)
	}
}

// countChanges is how many rows the change log holds.
func countChanges(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM changes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A writer logs only while another store watches: not for its own
// watchers, not for an expired lease, and no more once the other store's
// last watcher left and gave its lease back.
func TestLogOnlyWhileOthersWatch(t *testing.T) {
	a, b, path := openPair(t)
	raw := rawDB(t, path)
	watch(t, a) // A's own watcher: A need not log
	mustExec(t, raw, `INSERT INTO watchers(origin, until) VALUES(42, ?)`, time.Now().Add(-time.Second).UnixMicro())
	s := session.FromUser("unlogged")
	commit(t, a, s, "")
	if n := countChanges(t, raw); n != 0 {
		t.Fatalf("%d change rows without another store watching, want 0", n)
	}

	ctx, cancel := context.WithCancel(t.Context())
	onB, err := b.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s2 := s.Append(session.User("logged"))
	commit(t, a, s2, s.Head())
	expect(t, onB, s2, false)
	if n := countChanges(t, raw); n != 1 {
		t.Fatalf("%d change rows while B watches, want 1", n)
	}

	cancel()
	waitUntil(t, "B gives its lease back", func() bool {
		var n int
		err := raw.QueryRow(`SELECT count(*) FROM watchers WHERE origin = ?`, b.origin).Scan(&n)
		return err == nil && n == 0
	})
	s3 := s2.Append(session.User("unlogged again"))
	commit(t, a, s3, s2.Head())
	if n := countChanges(t, raw); n != 1 {
		t.Fatalf("%d change rows after B stopped watching, want still 1", n)
	}
}

// A lease renewed only after it ran out (writers may have stopped logging
// meanwhile) makes the next event Missed.
func TestLapsedLeaseReportsMissed(t *testing.T) {
	a, b, _ := openPair(t)
	p, err := a.newPoller(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	events := a.hub.Subscribe(t.Context())
	p.until = time.Now().Add(-time.Second).UnixMicro() // as if renewals failed for a minute
	if err := p.renew(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("after the lapse")
	commit(t, b, s, "")
	if err := p.poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, events); ev.ID != s.ID() || !ev.Missed {
		t.Fatalf("event %+v, want %s with Missed", ev, s.ID())
	}
}
