package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// countingStore counts Range calls.
type countingStore struct {
	store.Store
	ranges atomic.Int64
}

func (c *countingStore) Range(ctx context.Context, id session.ID, from, to int) ([]session.Chunk, error) {
	c.ranges.Add(1)
	return c.Store.Range(ctx, id, from, to)
}

// A commit asked for by many streams at once is read once; every range
// comes back as the store has it, inside the window, extending it, or
// before it.
func TestChunkCache(t *testing.T) {
	st := &countingStore{Store: openStore(t)}
	s := session.FromUser("go")
	for i := range cacheWindow + 100 {
		s = s.Append(session.User(fmt.Sprint(i)))
	}
	commit(t, st, s, "")
	c := newChunkCache(st)
	ctx := testCtx(t)
	check := func(from, to int) {
		t.Helper()
		got, err := c.Encoded(ctx, s.ID(), from, to)
		if err != nil || len(got) != to-from {
			t.Fatalf("[%d,%d): %d chunks, %v", from, to, len(got), err)
		}
		for i, e := range got {
			var ch session.Chunk
			if json.Unmarshal(e.json, &ch) != nil || ch.ID != s.Chunk(from+i).ID || e.kind != ch.Kind {
				t.Fatalf("[%d,%d): chunk %d is not the stored one", from, to, from+i)
			}
		}
	}
	// A thousand streams ask for the same new chunk at once: one read.
	n := s.Len() - 1
	var wg sync.WaitGroup
	for range 1000 {
		wg.Go(func() { check(n, n+1) })
	}
	wg.Wait()
	if got := st.ranges.Load(); got != 1 {
		t.Fatalf("%d store reads for one chunk asked 1,000 times", got)
	}
	check(n, n+1)   // within the window: no read
	check(n-5, n+1) // before the window: read for this caller
	if got := st.ranges.Load(); got != 2 {
		t.Fatalf("%d store reads, want 2", got)
	}
	// Extending the window past its bound keeps the latest cacheWindow.
	prev := s.Head()
	for i := range 3 {
		s = s.Append(session.User(fmt.Sprint("more ", i)))
	}
	commit(t, st, s, prev)
	check(n, s.Len())
	w := c.window(s.ID())
	if w.from+len(w.chunks) != s.Len() || len(w.chunks) != 4 {
		t.Fatalf("window [%d,+%d) after extending", w.from, len(w.chunks))
	}
	check(0, cacheWindow+50) // history: straight from the store
	// A window never holds more than cacheWindow chunks: the latest.
	prev = s.Head()
	for i := range cacheWindow + 10 {
		s = s.Append(session.User(fmt.Sprint("burst ", i)))
	}
	commit(t, st, s, prev)
	check(s.Len()-cacheWindow-10, s.Len())
	check(s.Len()-1, s.Len())
	if w := c.window(s.ID()); len(w.chunks) != cacheWindow || w.from+len(w.chunks) != s.Len() || len(w.json) != len(w.chunks) {
		t.Fatalf("window [%d,+%d) of %d, want the last %d", w.from, len(w.chunks), s.Len(), cacheWindow)
	}
	// Windows are kept for at most cacheSessions sessions.
	for range cacheSessions + 10 {
		o := session.FromUser("other")
		commit(t, st, o, "")
		check := func() {
			if _, err := c.Encoded(ctx, o.ID(), 0, 1); err != nil {
				t.Fatal(err)
			}
		}
		check()
	}
	if len(c.sessions) > cacheSessions {
		t.Fatalf("%d windows kept", len(c.sessions))
	}
}

// latest folds waiting events into the one in hand: the longest of the
// stream's session, or a Missed mark.
func TestLatestFoldsWaitingEvents(t *testing.T) {
	me, other := session.NewID(), session.NewID()
	for _, tc := range []struct {
		name    string
		first   store.Event
		waiting []store.Event
		want    store.Event
	}{
		{"none waiting", store.Event{ID: me, Len: 3}, nil, store.Event{ID: me, Len: 3}},
		{"a longer one of mine", store.Event{ID: me, Len: 3}, []store.Event{{ID: other, Len: 9}, {ID: me, Len: 5}, {ID: me, Len: 4}}, store.Event{ID: me, Len: 5}},
		{"mine after another's", store.Event{ID: other, Len: 9}, []store.Event{{ID: me, Len: 2}}, store.Event{ID: me, Len: 2}},
		{"only others", store.Event{ID: other, Len: 1}, []store.Event{{ID: other, Len: 2}}, store.Event{ID: other, Len: 1}},
		{"a missed mark", store.Event{ID: other, Len: 1}, []store.Event{{ID: other, Len: 2, Missed: true}}, store.Event{ID: other, Len: 1, Missed: true}},
		{"missed, then mine", store.Event{ID: other, Len: 1, Missed: true}, []store.Event{{ID: me, Len: 7}}, store.Event{ID: me, Len: 7, Missed: true}},
	} {
		ch := make(chan store.Event, len(tc.waiting))
		for _, ev := range tc.waiting {
			ch <- ev
		}
		if got := latest(ch, tc.first, me); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if len(ch) != 0 {
			t.Errorf("%s: %d events left waiting", tc.name, len(ch))
		}
	}
}
