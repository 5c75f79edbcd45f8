package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func testCommitAndLoad(t *testing.T, h Harness) {
	st := open(t, h)
	s := grow(session.FromSystem("sys"), 20, "a").To("local", session.Spec{Dir: "w", SecretEnv: []string{"TOKEN"}})
	mustCommit(t, st, s, "")
	got, err := st.Load(ctx(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, got, s)
	if got.Placement().Backend != "local" {
		t.Fatal("placement lost")
	}
	info, err := st.Info(ctx(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Head != s.Head() || info.Len != s.Len() || info.Status != store.StatusOpen || info.Lineage.Kind != session.LineageLeafSystem {
		t.Fatalf("info %+v", info)
	}
	if info.Created.IsZero() || info.Updated.Before(info.Created) {
		t.Fatalf("times created=%v updated=%v", info.Created, info.Updated)
	}
	// An empty session can be stored too.
	e := session.New()
	mustCommit(t, st, e, "")
	if got, err := st.Load(ctx(t), e.ID()); err != nil || got.Len() != 0 {
		t.Fatalf("empty session: %v", err)
	}
}

func testIdempotent(t *testing.T, h Harness) {
	st := open(t, h)
	s := grow(session.FromUser("q"), 5, "x")
	mustCommit(t, st, s, "")
	mustCommit(t, st, s, "") // the same commit again, as a retry would
	s2 := grow(s, 3, "y")
	mustCommit(t, st, s2, s.Head())
	mustCommit(t, st, s2, s.Head()) // retried after success
	info, err := st.Info(ctx(t), s.ID())
	if err != nil || info.Len != s2.Len() || info.Head != s2.Head() {
		t.Fatalf("after retries: %+v, %v", info, err)
	}
}

func testAppend(t *testing.T, h Harness) {
	st := open(t, h)
	s := session.FromUser("start")
	mustCommit(t, st, s, "")
	for i := range 70 { // enough single-chunk commits to cross any compaction threshold
		next := s.Append(session.Note(fmt.Sprintf("step %d", i)))
		mustCommit(t, st, next, s.Head())
		s = next
	}
	s3 := grow(s, 200, "big") // one large commit
	mustCommit(t, st, s3, s.Head())
	got, err := st.Load(ctx(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, got, s3)
}

func testConflicts(t *testing.T, h Harness) {
	st := open(t, h)
	base := grow(session.FromUser("q"), 3, "b")
	mustCommit(t, st, base, "")
	a := base.Append(session.User("writer a"))
	b := base.Append(session.User("writer b"))
	mustCommit(t, st, a, base.Head())
	if err := st.Commit(ctx(t), b, base.Head()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second writer on the same head: err = %v, want ErrConflict", err)
	}
	got, err := st.Load(ctx(t), base.ID())
	if err != nil || got.Head() != a.Head() {
		t.Fatalf("after conflict the winner's head must stay: %v", err)
	}
	// A stale prev, a prev for an unknown session, and a non-extension all conflict.
	if err := st.Commit(ctx(t), a.Append(session.User("z")), base.Head()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale prev: err = %v", err)
	}
	if err := st.Commit(ctx(t), session.FromUser("new"), a.Head()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("prev for an unstored session: err = %v", err)
	}
	if err := st.Commit(ctx(t), b.Append(session.User("z")), a.Head()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a chain that does not extend the stored head: err = %v", err)
	}
	if err := st.Commit(ctx(t), base, ""); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("re-creating a stored session with an older head: err = %v", err)
	}
}

func testConcurrentWriters(t *testing.T, h Harness) {
	st := open(t, h)
	s := session.FromUser("shared")
	mustCommit(t, st, s, "")
	const writers, each = 8, 6
	var wins, conflicts atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; i < each; {
				cur, err := st.Load(ctx(t), s.ID())
				if err != nil {
					t.Error(err)
					return
				}
				next := cur.Append(session.Note(fmt.Sprintf("w%d-%d", w, i)))
				switch err := st.Commit(ctx(t), next, cur.Head()); {
				case err == nil:
					wins.Add(1)
					i++
				case errors.Is(err, store.ErrConflict):
					conflicts.Add(1)
				default:
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := st.Load(ctx(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 1+writers*each || wins.Load() != writers*each {
		t.Fatalf("stored %d chunks after %d wins (%d conflicts), want %d", got.Len(), wins.Load(), conflicts.Load(), 1+writers*each)
	}
	seen := map[string]bool{}
	for _, c := range got.All() {
		if c.Note != nil {
			seen[c.Note.Text] = true
		}
	}
	for w := range writers {
		for i := range each {
			if !seen[fmt.Sprintf("w%d-%d", w, i)] {
				t.Fatalf("acknowledged commit w%d-%d is missing", w, i)
			}
		}
	}
	if err := got.Verify(); err != nil {
		t.Fatal(err)
	}
}

func testForksSharePrefix(t *testing.T, h Harness) {
	st := open(t, h)
	root := grow(session.FromSystem("root"), 150, "r")
	mustCommit(t, st, root, "")
	f := root.Fork().Append(session.User("fork one"))
	mustCommit(t, st, f, "")
	at, err := root.ForkAt(40)
	if err != nil {
		t.Fatal(err)
	}
	g := grow(at, 10, "g")
	mustCommit(t, st, g, "")
	// A fork of a fork, committed before and after its parent grows.
	ff := f.Fork().Append(session.User("fork of fork"))
	mustCommit(t, st, ff, "")
	for _, want := range []*session.Session{root, f, g, ff} {
		got, err := st.Load(ctx(t), want.ID())
		if err != nil {
			t.Fatal(err)
		}
		sameSession(t, got, want)
	}
	// Ranges across the point where a fork's own chunks begin.
	cs, err := st.Range(ctx(t), g.ID(), 35, 45)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(chunkIDs(cs), ids(g)[35:45]) {
		t.Fatal("range across the fork point is wrong")
	}
	// Growing the parent afterwards does not change the fork.
	root2 := grow(root, 5, "more")
	mustCommit(t, st, root2, root.Head())
	got, err := st.Load(ctx(t), f.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, got, f)
}

func testTailAndRange(t *testing.T, h Harness) {
	st := open(t, h)
	s := session.FromUser("q")
	mustCommit(t, st, s, "")
	for i := range 12 { // commits of varying size
		next := grow(s, 1+i*7, fmt.Sprint(i))
		mustCommit(t, st, next, s.Head())
		s = next
	}
	all := ids(s)
	for _, n := range []int{0, 1, 10, 100, len(all), len(all) + 5} {
		tail, err := st.Tail(ctx(t), s.ID(), n)
		if err != nil {
			t.Fatal(err)
		}
		want := all[max(0, len(all)-n):]
		if !slices.Equal(chunkIDs(tail), want) {
			t.Fatalf("Tail(%d): got %d chunks, want %d", n, len(tail), len(want))
		}
	}
	for _, r := range [][2]int{{0, 0}, {0, 1}, {5, 60}, {100, len(all)}, {len(all) - 1, len(all)}} {
		cs, err := st.Range(ctx(t), s.ID(), r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(chunkIDs(cs), all[r[0]:r[1]]) {
			t.Fatalf("Range(%d,%d) wrong", r[0], r[1])
		}
	}
	for _, r := range [][2]int{{-1, 3}, {3, 2}, {0, len(all) + 1}} {
		if _, err := st.Range(ctx(t), s.ID(), r[0], r[1]); err == nil {
			t.Fatalf("Range(%d,%d) of %d chunks: no error", r[0], r[1], len(all))
		}
	}
}

// testManySessions commits to more sessions at once than a backend batches
// in one statement, some of them past a compaction point, and checks that
// every session reads back whole.
func testManySessions(t *testing.T, h Harness) {
	st := open(t, h)
	const sessions = 150
	got := make([]*session.Session, sessions)
	var wg sync.WaitGroup
	for w := range sessions {
		wg.Go(func() {
			s := session.FromUser(fmt.Sprint("session ", w))
			if err := st.Commit(ctx(t), s, ""); err != nil {
				t.Error(err)
				return
			}
			commits := 5
			if w%50 == 0 {
				commits = 140
			}
			for i := range commits {
				next := s.Append(session.Note(fmt.Sprintf("s%d-%d", w, i)))
				if err := st.Commit(ctx(t), next, s.Head()); err != nil {
					t.Error(err)
					return
				}
				s = next
			}
			got[w] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, want := range got {
		loaded, err := st.Load(ctx(t), want.ID())
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Len() != want.Len() || loaded.Head() != want.Head() {
			t.Fatalf("session %s: loaded %d chunks ending %s, committed %d ending %s",
				want.ID(), loaded.Len(), loaded.Head().Short(), want.Len(), want.Head().Short())
		}
		info, err := st.Info(ctx(t), want.ID())
		if err != nil || info.Head != want.Head() || info.Len != want.Len() {
			t.Fatalf("session %s: info %+v, %v; want head %s len %d", want.ID(), info, err, want.Head().Short(), want.Len())
		}
		tail, err := st.Tail(ctx(t), want.ID(), 3)
		if err != nil || len(tail) != 3 || tail[2].ID != want.Head() {
			t.Fatalf("session %s: tail %d chunks, %v", want.ID(), len(tail), err)
		}
	}
}
