package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Option adjusts Run.
type Option func(*options)

type options struct {
	input int // -1: the chunks before the first one a module made
	tools bool
}

// Input sets how many leading chunks of the record were the run's input.
func Input(n int) Option { return func(o *options) { o.input = n } }

// RerunTools re-executes every tool call (in the sandbox the replayed
// session opens: give it a fresh one) instead of serving recorded
// results, and compares each result's outcome with the record: a
// reproducibility check.
func RerunTools() Option { return func(o *options) { o.tools = true } }

// InputOf returns the input of a recorded run: its chunks before the first
// one a module made (a chunk with a node).
func InputOf(recorded *session.Session) int {
	for i, c := range recorded.All() {
		if c.Node != "" {
			return i
		}
	}
	return recorded.Len()
}

// Run re-executes m on the recorded run's input. Model calls, tool results
// and selector decisions are served from the record by node path and order,
// and every chunk the run appends is checked against the recorded one; the
// replayed chain repeats the record's chunk ids. The first difference is
// returned as a *Divergence, as is a run that ends short of its record.
// Nothing is called live: a replay needs neither network nor keys. Agents
// with a store commit their replayed sessions as new sessions (modules
// such as approval gates read them back); wrap ctx with
// runctx.WithoutStore to leave the store untouched.
func Run(ctx context.Context, m flow.Module, recorded *session.Session, opts ...Option) (*session.Session, error) {
	o := options{input: -1}
	for _, f := range opts {
		f(&o)
	}
	n := o.input
	if n < 0 {
		n = InputOf(recorded)
	}
	in, err := recorded.ForkAt(n)
	if err != nil {
		return nil, err
	}
	t := newTape(recorded, recorded)
	t.tools = o.tools
	ctx = runctx.WithPlayer(runctx.NewRun(ctx), t)
	out, err := m.Forward(ctx, in)
	var d *Divergence
	if errors.As(err, &d) {
		return out, d
	}
	if d := t.unplayed(); d != nil {
		return out, errors.Join(d, err)
	}
	return out, err
}

// Resume continues the run whose input session is runID, after a crash,
// from what the store holds: every session derived from the input or
// labelled with the run (runctx.Label: the agents' sessions, committed
// step by step, and the run's output). The recorded prefix
// is replayed and the rest runs live. A tool call the record shows made
// but not finished runs again if the tool is idempotent; otherwise the
// model is told, by an interrupted error result, that its effect is
// unknown. The chain repeats the record's chunks, so none is duplicated.
// The output is committed.
func Resume(ctx context.Context, m flow.Module, st store.Store, runID session.ID) (*session.Session, error) {
	in, err := st.Load(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("replay: resume %s: %w", runID, err)
	}
	ids, err := st.Descendants(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("replay: resume %s: %w", runID, err)
	}
	labelled, err := st.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(runID)}})
	if err != nil {
		return nil, fmt.Errorf("replay: resume %s: %w", runID, err)
	}
	for _, info := range labelled {
		if !slices.Contains(ids, info.ID) {
			ids = append(ids, info.ID)
		}
	}
	sessions := make([]*session.Session, 0, len(ids)+1)
	// What modules committed onto the input itself is on the record too;
	// the run starts again from the input it was given.
	sessions = append(sessions, in)
	if in, err = startOf(ctx, st, in); err != nil {
		return nil, fmt.Errorf("replay: resume %s: %w", runID, err)
	}
	for _, id := range ids {
		s, err := st.Load(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("replay: resume %s: load %s: %w", runID, id, err)
		}
		sessions = append(sessions, s)
	}
	t := newTape(nil, sessions...)
	t.live, t.resuming = true, true
	t.dropFailures()
	ctx = runctx.WithPlayer(ctx, t)
	return flow.Run(ctx, st, m, in)
}

// startOf is the run's input as the run began: the stored input session
// in, rewound to the head its runctx.StartLabel names (in itself when the
// label is missing, as on runs recorded before it was kept).
func startOf(ctx context.Context, st store.Store, in *session.Session) (*session.Session, error) {
	info, err := st.Info(ctx, in.ID())
	if err != nil {
		return nil, err
	}
	head := session.ChunkID(info.Labels[runctx.StartLabel])
	if head == "" || head == in.Head() {
		return in, nil
	}
	for i := in.Len() - 1; i >= 0; i-- {
		if in.Chunk(i).ID == head {
			return in.Rewind(i + 1)
		}
	}
	return nil, fmt.Errorf("the input's start %s (label %s) is not in its chain", head, runctx.StartLabel)
}

// Fork branches a recorded run at chunk n: the first n chunks replay
// exactly (m, possibly changed, must do what the record did up to there)
// and everything after runs live. The output's chain shares the record's
// first n chunks, so the graph shows the branch point.
func Fork(ctx context.Context, m flow.Module, recorded *session.Session, n int, opts ...Option) (*session.Session, error) {
	if n < 0 || n > recorded.Len() {
		return nil, fmt.Errorf("replay: fork at %d: the record has %d chunks", n, recorded.Len())
	}
	o := options{input: -1}
	for _, f := range opts {
		f(&o)
	}
	in := o.input
	if in < 0 {
		in = InputOf(recorded)
	}
	if n < in {
		return nil, fmt.Errorf("replay: fork at %d: inside the run's input (%d chunks)", n, in)
	}
	prefix, err := recorded.ForkAt(n)
	if err != nil {
		return nil, err
	}
	input, err := recorded.ForkAt(in)
	if err != nil {
		return nil, err
	}
	t := newTape(prefix, prefix)
	t.live = true
	ctx = runctx.WithPlayer(runctx.NewRun(ctx), t)
	return m.Forward(ctx, input)
}
