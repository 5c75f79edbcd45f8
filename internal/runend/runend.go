// Package runend ends what a workflow run left unfinished when the run
// itself ends: the sessions its agents and modules committed (labelled
// runctx.Label with the run's id) move to the run's end status, and the
// number of model calls the run recorded is written on the run
// (runctx.StepsLabel). Local runs (package rath) and cluster runs (package
// cluster) end through it alike.
package runend

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ErrNotEnd: the status a run is said to end in is not closed or failed.
var ErrNotEnd = errors.New("runend: a run ends closed or failed")

// Result is what ending a run did.
type Result struct {
	// Moved is how many unfinished sessions were moved to the end status.
	Moved int
	// Steps is the number of model calls the run recorded.
	Steps int
}

// End ends the sessions of run, which ended in status to (closed or
// failed): each session labelled with run that is still open, active or
// paused moves to `to` (store.MoveTo: an open one passes through active to
// closed); the run's own session is left to its caller. It then records the
// run's steps on run (see steps). The writes go through ctx, which should
// carry the run's fence (store.WithFence): a writer that lost the run
// moves nothing and gets store.ErrFenced.
//
// It lists the run's sessions once, then moves and reads them several at
// a time (a store that commits writes in groups makes one durable write of
// several moves), and writes the steps label last.
func End(ctx context.Context, st store.Store, run session.ID, to store.Status) (Result, error) {
	if to != store.StatusClosed && to != store.StatusFailed {
		return Result{}, fmt.Errorf("%w: %q", ErrNotEnd, to)
	}
	infos, err := st.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(run)}})
	if err != nil {
		return Result{}, fmt.Errorf("runend: run %s: %w", run, err)
	}
	w := newWork(ctx, st, run, to)
	w.do(infos)
	res := Result{Moved: w.moved, Steps: w.steps()}
	if err := w.err(); err != nil {
		return res, fmt.Errorf("runend: run %s: %w", run, err)
	}
	if err := st.SetLabel(ctx, run, runctx.StepsLabel, strconv.Itoa(res.Steps)); err != nil {
		return res, fmt.Errorf("runend: run %s: %w", run, err)
	}
	return res, nil
}

// unfinished reports whether a session in status s may still be worked on.
func unfinished(s store.Status) bool {
	return s == store.StatusOpen || s == store.StatusActive || s == store.StatusPaused
}
