package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/riverqueue/river"

	"github.com/openrath/rath"
	"github.com/openrath/rath/runctx"
)

// A slice that ends because its worker was taken for dead gives its job
// back to the queue: a reaper may have listed the worker's jobs before
// it fetched this one, and a job completed then leaves its run running
// with no job at all. A slice that lost its run to another worker, alive,
// completes its job: the other holds the run.
func TestTakenForDeadGivesTheJobBack(t *testing.T) {
	w := &Worker{c: &Cluster{rt: &rath.Runtime{}, log: slog.New(slog.DiscardHandler)}}
	ctx := context.Background()
	lost := fmt.Errorf("%w: %w", runctx.ErrNotHolder, ErrTakenForDead)

	w.dead.Store(true)
	var snooze *river.JobSnoozeError
	if err := w.settle(ctx, ctx, &Run{ID: "ses_x"}, nil, lost); !errors.As(err, &snooze) {
		t.Fatalf("taken for dead: the slice ends with %v, not a snooze", err)
	}

	w.dead.Store(false)
	if err := w.settle(ctx, ctx, &Run{ID: "ses_x"}, nil, fmt.Errorf("%w: fenced", runctx.ErrNotHolder)); err != nil {
		t.Fatalf("lost to another worker: the slice ends with %v", err)
	}
}
