// Package runctx carries a workflow run through a context: which run a
// step belongs to and the store it commits to, the node path that names
// where a module runs ("review/0/branch-1/agent:coder#2"), the replay
// record a run is served from, and the modes a run is resumed in (pure
// replay, time slices, reviews, recorded verdicts, a workspace journal).
//
// Agents, workflow modules and replay share it. A program needs it only
// to write a workflow module of its own: name the module's place with
// WithPath and Invoke, and append the module's own chunks with Record so
// that they replay like an agent's.
package runctx
