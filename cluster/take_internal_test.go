package cluster

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

// A taker that wants a run in one state and finds it in another — a router
// that listed it unroutable a moment before a worker started it — takes
// nothing: the worker's epoch stays, and its writes go on. One that finds
// it as it wants takes it, unless someone took it in between.
func TestTakeIfFencesNobodyOut(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "rath.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := &Cluster{rt: &rath.Runtime{Store: st}}

	in := session.FromUser("a run")
	if err := st.Commit(ctx, in, ""); err != nil {
		t.Fatal(err)
	}
	run := &Run{ID: in.ID(), Workflow: "w"}
	if err := run.move(ctx, st, StateUnroutable); err != nil {
		t.Fatal(err)
	}
	// A router routes it; a worker takes it and runs it.
	rctx, routed, err := c.take(ctx, run.ID, StateUnroutable)
	if err != nil || routed == nil {
		t.Fatalf("take of an unroutable run = %v, %v", routed, err)
	}
	if err := routed.move(rctx, st, StateQueued); err != nil {
		t.Fatal(err)
	}
	wctx, info, err := c.takeInfo(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	working, _ := runOf(info)
	if err := working.move(wctx, st, StateRunning); err != nil {
		t.Fatal(err)
	}

	// A second router, late, finds it running: nothing taken.
	if fctx, late, err := c.take(ctx, run.ID, StateUnroutable); err != nil || late != nil || fctx != nil {
		t.Fatalf("late take of a running run = %v, %v; want nothing", late, err)
	}
	if e, _ := st.Epoch(ctx, run.ID); e != info.Epoch {
		t.Fatalf("epoch moved to %d by a take that took nothing; the worker holds %d", e, info.Epoch)
	}
	if err := working.move(wctx, st, StateDone); err != nil {
		t.Fatalf("the worker's write after a late take: %v", err)
	}

	// Two takers that read it at one epoch: the one that advances second
	// takes nothing (as takeIf, told that someone took it between its
	// read and its advance).
	if _, err := store.AdvanceFrom(ctx, st, run.ID, info.Epoch); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AdvanceFrom(ctx, st, run.ID, info.Epoch); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("second advance from one epoch: %v, want ErrFenced", err)
	}
	fctx, done, err := c.take(ctx, run.ID, StateDone)
	if err != nil || done == nil {
		t.Fatalf("take of a done run wanting done = %v, %v", done, err)
	}
	if f, _ := store.FenceFrom(fctx); f.Epoch != info.Epoch+2 {
		t.Fatalf("taken at epoch %d, want %d", f.Epoch, info.Epoch+2)
	}
}
