package postgres

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/storetest"
)

// serverURL is the server the tests create their databases on.
func serverURL(t testing.TB) string { return pgtest.Server(t) }

// freshDB creates an empty database for one test, dropped when it ends, and
// returns its URL.
func freshDB(t testing.TB) string { return pgtest.FreshDB(t, "rath_test") }

// admin runs one statement on its own connection.
func admin(t testing.TB, dbURL, sql string, args ...any) { pgtest.Exec(t, dbURL, sql, args...) }

func withDurability(dbURL string, d store.Durability) string {
	u, _ := url.Parse(dbURL)
	q := u.Query()
	q.Set("durability", string(d))
	u.RawQuery = q.Encode()
	return u.String()
}

func openURL(t testing.TB, rawURL string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func harness(t *testing.T, d store.Durability) storetest.Harness {
	dbURL := freshDB(t)
	return storetest.Harness{
		Open: func(t *testing.T) store.Store {
			st, err := store.Open(t.Context(), withDurability(dbURL, d))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Tamper: func(t *testing.T, id session.ID, i int) { tamper(t, dbURL, id, i) },
	}
}

func TestConformance(t *testing.T) {
	serverURL(t)
	for _, d := range []store.Durability{store.Sync, store.Async} {
		t.Run(string(d), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Harness { return harness(t, d) })
		})
	}
}

// tamper edits one chunk's stored bytes with plain SQL, as an attacker or a
// bad disk would: one letter of a string value changes case.
func tamper(t *testing.T, dbURL string, id session.ID, i int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var num int64
	if err := conn.QueryRow(ctx, `SELECT lane FROM rath.sessions WHERE id = $1`, id).Scan(&num); err != nil {
		t.Fatal(err)
	}
	var first int
	var data []byte
	if err := conn.QueryRow(ctx, `SELECT first, data FROM rath.segments WHERE lane = $1 AND first <= $2 ORDER BY first DESC LIMIT 1`, num, i).Scan(&first, &data); err != nil {
		t.Fatal(err)
	}
	data = storetest.TamperSegment(t, data, i-first)
	if _, err := conn.Exec(ctx, `UPDATE rath.segments SET data = $1 WHERE lane = $2 AND first = $3`, data, num, first); err != nil {
		t.Fatal(err)
	}
}

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: 30 SIGKILLed child processes; skipped in -short mode")
	}
	storetest.Crash(t, freshDB(t), 30)
}

// In async durability a killed client loses nothing either: the server
// holds every commit it acknowledged (only a server crash could lose the
// last unflushed ones).
func TestCrashAsync(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: 30 SIGKILLed child processes; skipped in -short mode")
	}
	storetest.Crash(t, withDurability(freshDB(t), store.Async), 30)
}

func TestCrashChild(t *testing.T) { storetest.CrashChild(t) }

// A database migrated by a newer build is refused, naming both versions.
func TestNewerSchema(t *testing.T) {
	dbURL := freshDB(t)
	st := openURL(t, dbURL)
	st.Close()
	admin(t, dbURL, `UPDATE rath.meta SET value = '99' WHERE key = 'schema_version'`)
	_, err := store.Open(t.Context(), dbURL)
	if !errors.Is(err, store.ErrVersion) || !strings.Contains(err.Error(), "version 99") ||
		!strings.Contains(err.Error(), "up to "+strconv.Itoa(schemaVersion)) {
		t.Fatalf("opening a database with a newer schema: %v", err)
	}
}

// Several processes opening a new database at once migrate it once.
func TestConcurrentOpen(t *testing.T) {
	dbURL := freshDB(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			st, err := Open(t.Context(), Options{URL: dbURL})
			if err == nil {
				err = st.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Two stores (two pools, as two processes would have) race on one head:
// exactly one wins each time, and the loser gets ErrConflict.
func TestConflictAcrossStores(t *testing.T) {
	dbURL := freshDB(t)
	a, b := openURL(t, dbURL), openURL(t, dbURL)
	race := func(sa, sb *session.Session, prev session.ChunkID) (winner *session.Session) {
		t.Helper()
		var wg sync.WaitGroup
		var ea, eb error
		start := make(chan struct{})
		wg.Go(func() { <-start; ea = a.Commit(t.Context(), sa, prev) })
		wg.Go(func() { <-start; eb = b.Commit(t.Context(), sb, prev) })
		close(start)
		wg.Wait()
		switch {
		case ea == nil && errors.Is(eb, store.ErrConflict):
			return sa
		case eb == nil && errors.Is(ea, store.ErrConflict):
			return sb
		}
		t.Fatalf("want one winner and one ErrConflict, got %v and %v", ea, eb)
		return nil
	}
	// Creating the same new session with different contents.
	fresh := session.FromUser("q")
	cur := race(fresh.Append(session.User("from a")), fresh.Append(session.User("from b")), "")
	for i := range 30 {
		w := race(cur.Append(session.Note("a "+strconv.Itoa(i))), cur.Append(session.Note("b "+strconv.Itoa(i))), cur.Head())
		cur = w
	}
	for _, st := range []store.Store{a, b} {
		got, err := st.Load(t.Context(), cur.ID())
		if err != nil || got.Head() != cur.Head() || got.Len() != cur.Len() {
			t.Fatalf("after the races: %v (len %d)", err, got.Len())
		}
	}
	// The same commit made by both is no conflict: the second is a retry.
	same := cur.Append(session.User("both"))
	var wg sync.WaitGroup
	for _, st := range []store.Store{a, b} {
		wg.Go(func() {
			if err := st.Commit(t.Context(), same, cur.Head()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// A commit through one store is seen live by a watcher on another, as a
// server process sees a worker's commits.
func TestWatchAcrossStores(t *testing.T) {
	dbURL := freshDB(t)
	watcher, writer := openURL(t, dbURL), openURL(t, dbURL)
	events, err := watcher.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("watched from afar")
	if err := writer.Commit(t.Context(), s, ""); err != nil {
		t.Fatal(err)
	}
	s2 := s.Append(session.User("more"))
	if err := writer.Commit(t.Context(), s2, s.Head()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*session.Session{s, s2} {
		select {
		case ev := <-events:
			if ev.ID != want.ID() || ev.Head != want.Head() || ev.Len != want.Len() {
				t.Fatalf("event %+v, want %s at %d", ev, want.Head().Short(), want.Len())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s of a commit in the other store")
		}
	}
	// Close ends the subscription.
	watcher.Close()
	select {
	case _, ok := <-events:
		if ok {
			t.Fatal("an event after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the watch")
	}
}

// When the listening connection drops, the listener reconnects and goes on
// delivering events; the first one after the gap says events were missed.
func TestWatchReconnects(t *testing.T) {
	dbURL := freshDB(t)
	st := openURL(t, dbURL)
	events, err := st.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var dropped int
	if err := st.(*Store).pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE ok) FROM (
		SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+channel+`') AS t`).Scan(&dropped); err != nil || dropped != 1 {
		t.Fatalf("dropping the listening connection: %d dropped, %v", dropped, err)
	}
	deadline := time.After(15 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	sent := map[session.ID]bool{}
	first := true
	for {
		select {
		case ev := <-events:
			if first && !ev.Missed {
				t.Fatalf("the first event after a reconnect, %+v, does not say events were missed", ev)
			}
			first = false
			if sent[ev.ID] {
				return // a commit made after the drop was delivered
			}
		case <-tick.C:
			s := session.FromUser("after the drop")
			if err := st.Commit(t.Context(), s, ""); err != nil {
				t.Fatal(err)
			}
			sent[s.ID()] = true
		case <-deadline:
			t.Fatal("no event within 15s of the listening connection being dropped")
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, Options{}); err == nil {
		t.Fatal("no URL accepted")
	}
	if _, err := store.Open(ctx, "postgres://u@127.0.0.1/x?durability=sometimes"); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Fatalf("bad durability: %v", err)
	}
	// Port 1 on loopback refuses at once; the password must not leak.
	_, err := store.Open(ctx, "postgresql://u:secret@127.0.0.1:1/x?connect_timeout=2")
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("unreachable server: %v", err)
	}
}

// Both schemes reach the backend, with the durability parameter taken out
// before pgx sees the URL.
func TestSchemesAndDurability(t *testing.T) {
	dbURL := freshDB(t)
	alt := strings.Replace(dbURL, "postgres://", "postgresql://", 1)
	for _, u := range []string{withDurability(dbURL, store.Exit), alt} {
		st := openURL(t, u)
		s := session.FromUser("hello")
		if err := st.Commit(t.Context(), s, ""); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Open(t.Context(), Options{URL: withDurability(dbURL, store.Async)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var sc string
	if err := st.pool.QueryRow(t.Context(), `SHOW synchronous_commit`).Scan(&sc); err != nil || sc != "off" {
		t.Fatalf("async store: synchronous_commit = %q, %v", sc, err)
	}
}
