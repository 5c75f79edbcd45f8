package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/cluster"
)

// Workers that ended stay in the store, but the cluster reads only those
// that have not (so its ticks do not grow with restarts), and Status shows
// the latest few of the ended ones.
func TestEndedWorkersAreNotReadEachTick(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, home, "sqlite://"+filepath.Join(home, "rath.db"))
	ctx := context.Background()
	const ended = 20
	for i := range ended {
		w, err := e.cl.NewWorker(ctx, cluster.WorkerOptions{ID: fmt.Sprint("short-lived-", i), Concurrency: 1})
		if err != nil {
			t.Fatal(err)
		}
		wctx, stop := context.WithCancel(ctx)
		stop() // drain at once: Run starts, then stops
		if err := w.Run(wctx); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	live, err := e.cl.NewWorker(ctx, cluster.WorkerOptions{ID: "still-here", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	rep, err := e.cl.Status(ctx, cluster.StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var stopped, alive int
	for _, w := range rep.Workers {
		switch {
		case w.ID == "still-here" && w.Alive:
			alive++
		case w.State == "stopped" && !w.Alive:
			stopped++
		default:
			t.Errorf("unexpected worker in status: %+v", w)
		}
	}
	if alive != 1 || stopped != 16 {
		t.Fatalf("status shows %d live and %d stopped workers; want the live one and the latest 16 of %d stopped", alive, stopped, ended)
	}
}
