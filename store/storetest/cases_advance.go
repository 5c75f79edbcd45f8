package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// testAdvanceFrom: an Advance under a fence on the session itself moves
// the epoch only from the fence's, so of takers that read the session at
// one epoch exactly one takes it, and a taker that read it before someone
// else took it fences nobody out.
func testAdvanceFrom(t *testing.T, h Harness) {
	st := h.Open(t)
	run := session.FromUser("run taken if unchanged")
	mustCommit(t, st, run, "")
	mustAdvance(t, st, run.ID(), 1)

	// From the current epoch: it moves.
	if e, err := store.AdvanceFrom(ctx(t), st, run.ID(), 1); err != nil || e != 2 {
		t.Fatalf("AdvanceFrom(1) at epoch 1 = %d, %v; want 2", e, err)
	}
	// From a stale one: fenced, and the epoch stays.
	_, err := store.AdvanceFrom(ctx(t), st, run.ID(), 1)
	isFenced(t, "AdvanceFrom a stale epoch", err)
	epochIs(t, st, run.ID(), 2)
	// A fence on another session is not a compare: Advance moves as ever.
	other := session.FromUser("another run")
	mustCommit(t, st, other, "")
	if e, err := st.Advance(fenced(t, other.ID(), 7), run.ID()); err != nil || e != 3 {
		t.Fatalf("Advance under another session's fence = %d, %v; want 3", e, err)
	}
	// Unknown sessions are not found, fenced or not.
	if _, err := store.AdvanceFrom(ctx(t), st, session.NewID(), 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AdvanceFrom of an unknown session: err = %v, want ErrNotFound", err)
	}

	// Many takers from one epoch: exactly one wins; the others move nothing.
	const takers = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, fencedOut := 0, 0
	for range takers {
		wg.Go(func() {
			e, err := store.AdvanceFrom(ctx(t), st, run.ID(), 3)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && e == 4:
				won++
			case errors.Is(err, store.ErrFenced):
				fencedOut++
			default:
				t.Errorf("AdvanceFrom(3) = %d, %v", e, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || fencedOut != takers-1 {
		t.Fatalf("%d takers from one epoch: %d took it, %d were fenced out; want 1 and %d", takers, won, fencedOut, takers-1)
	}
	epochIs(t, st, run.ID(), 4)
}
