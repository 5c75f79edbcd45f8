package runctx

import (
	"context"
	"sync"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Label is the store label put on every session a workflow run commits:
// the run's id (its input session's), by which replay.Resume finds
// everything the run recorded.
const Label = "rath.run"

type key struct{}

// state is what a context carries about its run.
type state struct {
	path string
	runs *invocations
	run  session.ID  // the workflow run's input session, if known
	st   store.Store // the run's store, if it has one
}

func stateOf(ctx context.Context) state {
	s, _ := ctx.Value(key{}).(state)
	return s
}

// invocations counts the runs under each node within one workflow run.
type invocations struct {
	mu sync.Mutex
	n  map[string]int
}

func fresh() *invocations { return &invocations{n: map[string]int{}} }

// WithRun returns ctx for the workflow run whose input session is id,
// with fresh invocation counters; modules commit what they derive to st
// (nil: no store).
func WithRun(ctx context.Context, id session.ID, st store.Store) context.Context {
	s := stateOf(ctx)
	s.runs, s.run, s.st = fresh(), id, st
	return context.WithValue(ctx, key{}, s)
}

// NewRun returns ctx with fresh invocation counters: the start of a
// workflow run (a replay starts one so its counts match the record's).
func NewRun(ctx context.Context) context.Context {
	s := stateOf(ctx)
	s.runs = fresh()
	return context.WithValue(ctx, key{}, s)
}

// ID returns the workflow run ctx belongs to ("" if none).
func ID(ctx context.Context) session.ID { return stateOf(ctx).run }

// Store returns the store of the workflow run ctx belongs to, or nil.
func Store(ctx context.Context) store.Store { return stateOf(ctx).st }
