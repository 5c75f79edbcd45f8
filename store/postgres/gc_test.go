package postgres

import (
	"fmt"
	"sync"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// GC racing with commits that fork the sessions it collects, from another
// store (another process): every fork that was acknowledged loads whole and
// verifies, whichever came first — its base's collection (the fork then
// stores its whole chain) or its commit (GC then copies what it needs).
func TestGCWhileForking(t *testing.T) {
	dbURL := freshDB(t)
	collector, forker := openURL(t, dbURL), openURL(t, dbURL)
	ctx := t.Context()
	var forks []*session.Session
	for round := range 4 {
		// A chain root -> mid, both closed, so both are GC's to take.
		root := session.FromUser(fmt.Sprint("root ", round))
		for i := range 40 {
			root = root.Append(session.Note(fmt.Sprint("r", i)))
		}
		mid := root.Fork()
		for i := range 40 {
			mid = mid.Append(session.Note(fmt.Sprint("m", i)))
		}
		for _, s := range []*session.Session{root, mid} {
			if err := forker.Commit(ctx, s, ""); err != nil {
				t.Fatal(err)
			}
			for _, to := range []store.Status{store.StatusActive, store.StatusClosed} {
				if err := forker.SetStatus(ctx, s.ID(), to); err != nil {
					t.Fatal(err)
				}
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := range 4 {
			wg.Go(func() {
				for i := range 5 {
					base := mid
					if i%2 == 1 {
						base = root
					}
					f := base.Fork().Append(session.User(fmt.Sprint("fork ", w, i)))
					if err := forker.Commit(ctx, f, ""); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					forks = append(forks, f)
					mu.Unlock()
				}
			})
		}
		wg.Go(func() {
			if _, err := collector.GC(ctx, 0); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if _, err := collector.GC(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range forks {
		got, err := collector.Load(ctx, f.ID())
		if err != nil {
			t.Fatal(err)
		}
		if got.Head() != f.Head() || got.Len() != f.Len() {
			t.Fatalf("fork %s: loaded %d chunks, want %d", f.ID(), got.Len(), f.Len())
		}
		if err := collector.Verify(ctx, f.ID()); err != nil {
			t.Fatal(err)
		}
	}
}
