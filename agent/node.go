package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Node paths. Workflows name where a module runs — "review/0/branch-1" — by
// carrying a path in the context; an agent's chunks are recorded under
// "<path>/agent:<name>#<n>", n counting the agent's runs under that path
// within one workflow run. Paths are deterministic, so replay can match a
// recorded call to the call that repeats it.

type pathKey struct{}

type pathState struct {
	path string
	runs *invocations
	run  session.ID  // the workflow run's input session, if known
	st   store.Store // the run's store, if it has one
}

// RunLabel is the store label an agent puts on the sessions it commits
// within a workflow run: the run's id (its input session's), by which
// replay.Resume finds everything the run recorded.
const RunLabel = "rath.run"

// WithRun returns ctx for the workflow run whose input session is id,
// with fresh invocation counters; modules commit what they derive to st
// (nil: no store).
func WithRun(ctx context.Context, id session.ID, st store.Store) context.Context {
	ps, _ := ctx.Value(pathKey{}).(pathState)
	ps.runs = &invocations{n: map[string]int{}}
	ps.run, ps.st = id, st
	return context.WithValue(ctx, pathKey{}, ps)
}

// RunStore returns the store of the workflow run ctx belongs to, or nil.
func RunStore(ctx context.Context) store.Store {
	ps, _ := ctx.Value(pathKey{}).(pathState)
	return ps.st
}

// RunID returns the workflow run ctx belongs to ("" if none).
func RunID(ctx context.Context) session.ID {
	st, _ := ctx.Value(pathKey{}).(pathState)
	return st.run
}

// invocations counts the runs under each node within one workflow run.
type invocations struct {
	mu sync.Mutex
	n  map[string]int
}

// WithPath returns ctx with the node path extended by seg (a path without
// a counter yet starts one).
func WithPath(ctx context.Context, seg string) context.Context {
	st, _ := ctx.Value(pathKey{}).(pathState)
	if st.runs == nil {
		st.runs = &invocations{n: map[string]int{}}
	}
	if st.path == "" {
		st.path = seg
	} else if seg != "" {
		st.path += "/" + seg
	}
	return context.WithValue(ctx, pathKey{}, st)
}

// NewRun returns ctx with fresh invocation counters: the start of a
// workflow run (a replay starts one so its counts match the record's).
func NewRun(ctx context.Context) context.Context {
	st, _ := ctx.Value(pathKey{}).(pathState)
	st.runs = &invocations{n: map[string]int{}}
	return context.WithValue(ctx, pathKey{}, st)
}

// Path returns the node path ctx carries ("" outside any workflow).
func Path(ctx context.Context) string {
	st, _ := ctx.Value(pathKey{}).(pathState)
	return st.path
}

// Invoke returns the node name of the next run of base under ctx's path:
// "<path>/<base>#<n>". Outside a workflow it is base itself.
func Invoke(ctx context.Context, base string) string {
	st, _ := ctx.Value(pathKey{}).(pathState)
	if st.runs == nil {
		return base
	}
	node := base
	if st.path != "" {
		node = st.path + "/" + base
	}
	st.runs.mu.Lock()
	st.runs.n[node]++
	n := st.runs.n[node]
	st.runs.mu.Unlock()
	return fmt.Sprintf("%s#%d", node, n)
}
