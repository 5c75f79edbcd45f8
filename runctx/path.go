package runctx

import (
	"context"
	"fmt"
)

// Node paths. Workflows name where a module runs — "review/0/branch-1" —
// by carrying a path in the context; an agent's chunks are recorded under
// "<path>/agent:<name>#<n>", n counting the agent's runs under that path
// within one workflow run. Paths are deterministic, so replay can match a
// recorded call to the call that repeats it.

// WithPath returns ctx with the node path extended by seg (a path without
// a counter yet starts one).
func WithPath(ctx context.Context, seg string) context.Context {
	s := stateOf(ctx)
	if s.runs == nil {
		s.runs = fresh()
	}
	if s.path == "" {
		s.path = seg
	} else if seg != "" {
		s.path += "/" + seg
	}
	return context.WithValue(ctx, key{}, s)
}

// Path returns the node path ctx carries ("" outside any workflow).
func Path(ctx context.Context) string { return stateOf(ctx).path }

// Invoke returns the node name of the next run of base under ctx's path:
// "<path>/<base>#<n>". Outside a workflow it is base itself.
func Invoke(ctx context.Context, base string) string {
	s := stateOf(ctx)
	if s.runs == nil {
		return base
	}
	node := base
	if s.path != "" {
		node = s.path + "/" + base
	}
	s.runs.mu.Lock()
	s.runs.n[node]++
	n := s.runs.n[node]
	s.runs.mu.Unlock()
	return fmt.Sprintf("%s#%d", node, n)
}
