package postgres

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Commits larger than segmentBytes are cut into several rows; compaction
// and GC keep rows within that size; reads across row boundaries are exact.
func TestLargeCommitsAreCut(t *testing.T) {
	dbURL := freshDB(t)
	st, err := Open(t.Context(), Options{URL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pad := strings.Repeat("x", 1000)
	big := func(s *session.Session, n int, tag string) *session.Session {
		cs := make([]session.Chunk, n)
		for i := range cs {
			cs[i] = session.User(fmt.Sprintf("%s %d %s", tag, i, pad))
		}
		return s.Append(cs...)
	}
	commit := func(s *session.Session, prev session.ChunkID) {
		t.Helper()
		if err := st.Commit(t.Context(), s, prev); err != nil {
			t.Fatal(err)
		}
	}
	s := big(session.FromUser("q"), 700, "create") // the transaction path
	commit(s, "")
	small := func(n int) {
		for i := range n {
			next := s.Append(session.Note(fmt.Sprint("step ", i)))
			commit(next, s.Head())
			s = next
		}
	}
	small(70)                     // compaction over small rows
	next := big(s, 700, "append") // the one-statement path
	commit(next, s.Head())
	s = next
	small(70) // compaction over a run that holds a cut commit

	var rows, maxBytes int
	if err := st.pool.QueryRow(t.Context(), `SELECT count(*), max(octet_length(data)) FROM rath.segments`).Scan(&rows, &maxBytes); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d segment rows, the largest %d bytes", rows, maxBytes)
	if rows < 6 || maxBytes > segmentBytes+2000 {
		t.Fatalf("%d rows, the largest %d bytes: want commits cut at about %d bytes", rows, maxBytes, segmentBytes)
	}
	got, err := st.Load(t.Context(), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]session.ChunkID, s.Len())
	for i, c := range s.All() {
		want[i] = c.ID
	}
	for i, c := range got.All() {
		if c.ID != want[i] {
			t.Fatalf("chunk %d differs", i)
		}
	}
	for from := 0; from < s.Len(); from += 97 {
		cs, err := st.Range(t.Context(), s.ID(), from, min(from+250, s.Len()))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cs {
			if c.ID != want[from+i] {
				t.Fatalf("Range from %d: chunk %d differs", from, from+i)
			}
		}
	}
	// A fork survives the collection of its base, which copies the
	// prefix it needs into its own lane, cut the same way.
	f := s.Fork().Append(session.User("fork"))
	commit(f, "")
	for _, to := range []store.Status{store.StatusActive, store.StatusClosed} {
		if err := st.SetStatus(t.Context(), s.ID(), to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	if stats, err := st.GC(t.Context(), time.Millisecond); err != nil || stats.Sessions != 1 || stats.Chunks != 0 {
		t.Fatalf("GC = %+v, %v", stats, err)
	}
	if err := st.Verify(t.Context(), f.ID()); err != nil {
		t.Fatal(err)
	}
	tail, err := st.Tail(t.Context(), f.ID(), 500)
	if err != nil || !slices.Equal(chunkIDsOf(tail[:499]), want[len(want)-499:]) {
		t.Fatalf("fork tail after GC: %v", err)
	}
	if err := st.pool.QueryRow(t.Context(), `SELECT max(octet_length(data)) FROM rath.segments`).Scan(&maxBytes); err != nil || maxBytes > segmentBytes+2000 {
		t.Fatalf("after GC the largest row is %d bytes (%v)", maxBytes, err)
	}
}

func chunkIDsOf(cs []session.Chunk) []session.ChunkID {
	out := make([]session.ChunkID, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
