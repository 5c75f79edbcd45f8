package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Compaction merges a lane's small segments from the tail the writer
// remembers, or from the rows it reads back when it does not know them all:
// after a reopen, after another store wrote the file, after the tails grew
// too large, and when one commit's segment is too large to keep. Every path
// must leave the session whole and its rows few.

func openTail(t *testing.T, path string, d store.Durability) *Store {
	t.Helper()
	st, err := Open(context.Background(), Options{Path: path, Durability: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// appendN commits n one-chunk appends to s, each of size bytes.
func appendN(t *testing.T, st store.Store, s *session.Session, n, size int) *session.Session {
	t.Helper()
	for i := range n {
		next := s.Append(session.Note(fmt.Sprintf("%d %s", s.Len(), strings.Repeat("x", size))))
		if err := st.Commit(context.Background(), next, s.Head()); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		s = next
	}
	return s
}

// checkWhole loads s back, verifies it, and checks that its lane holds no
// more rows than compaction allows.
func checkWhole(t *testing.T, st store.Store, path string, s *session.Session) {
	t.Helper()
	ctx := context.Background()
	got, err := st.Load(ctx, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != s.Len() || got.Head() != s.Head() {
		t.Fatalf("loaded %d chunks ending %s, committed %d ending %s", got.Len(), got.Head().Short(), s.Len(), s.Head().Short())
	}
	for i := range s.Len() {
		if got.Chunk(i).ID != s.Chunk(i).ID {
			t.Fatalf("chunk %d: loaded %s, committed %s", i, got.Chunk(i).ID.Short(), s.Chunk(i).ID.Short())
		}
	}
	if err := st.Verify(ctx, s.ID()); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The rows tile the session: each starts where the one before ends.
	var compactFrom int
	if err := db.QueryRow(`SELECT compact_from FROM sessions WHERE id = ?`, s.ID()).Scan(&compactFrom); err != nil {
		t.Fatal(err)
	}
	q, err := db.Query(`SELECT g.first, g.n FROM segments g JOIN sessions s ON s.lane = g.lane WHERE s.id = ? ORDER BY g.first`, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	rows, end := 0, 0
	for q.Next() {
		var first, n int
		if err := q.Scan(&first, &n); err != nil {
			t.Fatal(err)
		}
		if first != end {
			t.Fatalf("row %d covers [%d, %d), the one before ended at %d", rows, first, first+n, end)
		}
		rows, end = rows+1, first+n
	}
	if err := q.Err(); err != nil || end != s.Len() {
		t.Fatalf("the rows end at chunk %d of %d (%v)", end, s.Len(), err)
	}
	if maxRows := s.Len()/compactAt + compactAt; rows > maxRows {
		t.Fatalf("%d chunks in %d rows, want at most %d: compaction did not merge", s.Len(), rows, maxRows)
	}
	if s.Len()-compactFrom >= compactAt {
		t.Fatalf("compact_from %d of %d chunks: a compaction is overdue", compactFrom, s.Len())
	}
}

func TestCompactionFromTheTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	st := openTail(t, path, store.Sync)
	s := session.FromUser("tail")
	if err := st.Commit(context.Background(), s, ""); err != nil {
		t.Fatal(err)
	}
	s = appendN(t, st, s, 3*compactAt+5, 100)
	checkWhole(t, st, path, s)
}

func TestCompactionAfterReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	st := openTail(t, path, store.Sync)
	s := session.FromUser("reopen")
	if err := st.Commit(context.Background(), s, ""); err != nil {
		t.Fatal(err)
	}
	s = appendN(t, st, s, compactAt+compactAt/2, 100) // a tail of half a compaction
	st.Close()
	st = openTail(t, path, store.Sync) // knows the head, not the tail
	s = appendN(t, st, s, compactAt, 100)
	checkWhole(t, st, path, s)
}

// Successive commits of one session can share a batch (a session handed
// on before its commit returned, or async durability): a compaction then
// drops the session's rows queued before it in the batch, whose segments
// it merges. The batch is run here as the writer runs it, with another
// session's commits in between.
func TestCompactionWithinABatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	st := openTail(t, path, store.Sync)
	ctx := context.Background()
	s, o := session.FromUser("batched"), session.FromUser("other")
	for _, x := range []*session.Session{s, o} {
		if err := st.Commit(ctx, x, ""); err != nil {
			t.Fatal(err)
		}
	}
	s = appendN(t, st, s, compactAt-5, 30)
	var batch []*job
	queue := func(x **session.Session) {
		prev := (*x).Head()
		next := (*x).Append(session.Note(fmt.Sprint("batched ", (*x).Len())))
		pre, err := preEncode(next, prev)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, &job{ctx: ctx, light: true, done: make(chan error, 1),
			fn: func(tx *wtx, evs *[]store.Event) error { return commitTx(tx, next, prev, nil, nil, pre, evs) }})
		*x = next
	}
	for range compactAt / 4 {
		queue(&s)
		queue(&o)
	}
	st.w.run(batch)
	for i, j := range batch {
		if err := <-j.done; err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	checkWhole(t, st, path, s)
	checkWhole(t, st, path, o)
}

// Two stores on one file are two writers: each finds the other's commits
// (PRAGMA data_version) and forgets what it knew of the session.
func TestCompactionAcrossStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	a, b := openTail(t, path, store.Sync), openTail(t, path, store.Sync)
	s := session.FromUser("shared")
	if err := a.Commit(context.Background(), s, ""); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		st := store.Store(a)
		if i%2 == 1 {
			st = b
		}
		s = appendN(t, st, s, compactAt/2+3, 80)
	}
	checkWhole(t, a, path, s)
	checkWhole(t, b, path, s)
}

// Tails larger than the writer keeps are read back at compaction.
func TestCompactionOfLargeTails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	st := openTail(t, path, store.Sync)
	var ss []*session.Session
	for i := range 3 {
		s := session.FromUser(fmt.Sprint("large ", i))
		if err := st.Commit(context.Background(), s, ""); err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	// One segment above maxTailPart, then enough to pass maxTailBytes.
	ss[0] = appendN(t, st, ss[0], 1, maxTailPart+1)
	for range 2 {
		for i := range ss {
			ss[i] = appendN(t, st, ss[i], 10, maxTailBytes/38)
		}
	}
	for i := range ss {
		ss[i] = appendN(t, st, ss[i], compactAt, 10)
		checkWhole(t, st, path, ss[i])
	}
}
