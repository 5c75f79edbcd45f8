package lineage

import (
	"context"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Task is the user's question.
const Task = "Our config service re-reads its YAML file on every request. How should we cache it?"

// Option is one design a branch argues for.
type Option struct {
	// Name is the branch's node-path segment.
	Name string
	// Prompt asks the proposer to argue for the design.
	Prompt string
}

// Options are the two branches, in merge order.
var Options = []Option{
	{Name: "in-process", Prompt: "Argue for an in-process cache."},
	{Name: "redis", Prompt: "Argue for a shared Redis cache."},
}

const (
	proposerInstructions = "You propose one design in at most three sentences, arguing for the option you are asked to argue for."
	reviewerInstructions = "You review design proposals and recommend one of them in at most two sentences."
)

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        "lineage",
		Description: "fork two proposals, merge them, review a detached copy, merge it back: the lineage graph",
		Build:       build,
	})
}

func build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m, err := exmodel.Pick(ctx, scripted.Func(offline))
	if err != nil {
		return nil, nil, fmt.Errorf("lineage: model: %w", err)
	}
	w := &workflow{st: rt.Store}
	if w.proposer, err = agent.New(agent.Config{Name: "proposer", Instructions: proposerInstructions, Model: m,
		Store: rt.Store, Sandboxes: rt.Sandboxes}); err != nil {
		return nil, nil, fmt.Errorf("lineage: %w", err)
	}
	if w.reviewer, err = agent.New(agent.Config{Name: "reviewer", Instructions: reviewerInstructions, Model: m,
		Store: rt.Store, Sandboxes: rt.Sandboxes}); err != nil {
		return nil, nil, fmt.Errorf("lineage: %w", err)
	}
	return flow.Func(w.run), session.FromUser(Task), nil
}

// workflow holds the agents and the store the sessions it makes go to.
type workflow struct {
	st                 store.Store
	proposer, reviewer *agent.Agent
}

// run forks, merges, detaches and merges again.
func (w *workflow) run(ctx context.Context, in *session.Session) (*session.Session, error) {
	// Fork: one branch per option, each with its own prompt.
	outs := make([]*session.Session, len(Options))
	for i, o := range Options {
		f, err := runctx.Record(ctx, in.Fork(), runctx.Invoke(ctx, "lineage:option"), session.User(o.Prompt))
		if err != nil {
			return in, err
		}
		if err := w.commit(ctx, f); err != nil {
			return in, err
		}
		if outs[i], err = w.proposer.Forward(runctx.WithPath(ctx, o.Name), f); err != nil {
			return in, fmt.Errorf("lineage: branch %s: %w", o.Name, err)
		}
	}

	// Merge: the shared prefix once, then each branch's own chunks.
	merged, err := outs[0].Merge(outs[1])
	if err != nil {
		return in, fmt.Errorf("lineage: merge the branches: %w", err)
	}
	x := merged.Lineage().Extras
	merged, err = runctx.Record(ctx, merged, runctx.Invoke(ctx, "lineage:note"), session.Note(fmt.Sprintf(
		"Merged the two proposals: %s chunk(s) shared and kept once, %s from the %s branch as they were, %s from the %s branch re-chained after them.",
		x["common_prefix"], x["ours"], Options[0].Name, x["theirs"], Options[1].Name)))
	if err != nil {
		return in, err
	}
	if err := w.commit(ctx, merged); err != nil {
		return in, err
	}

	// Detach: the same chunks in a history of its own, for the reviewer.
	copied := merged.Detach()
	if err := w.commit(ctx, copied); err != nil {
		return in, err
	}
	reviewed, err := w.reviewer.Forward(runctx.WithPath(ctx, "review"), copied)
	if err != nil {
		return in, fmt.Errorf("lineage: review: %w", err)
	}

	// Merge the review back: it extends the merged chunks, so this
	// fast-forwards and the review's chunks keep their ids.
	out, err := merged.Merge(reviewed)
	if err != nil {
		return in, fmt.Errorf("lineage: merge the review: %w", err)
	}
	x = out.Lineage().Extras
	return runctx.Record(ctx, out, runctx.Invoke(ctx, "lineage:note"), session.Note(fmt.Sprintf(
		"Merged the review of a detached copy back: %s chunk(s) in common, %s new from the review, none re-chained.",
		x["common_prefix"], x["theirs"])))
}

// commit stores a new session, so that the lineage graph has it.
func (w *workflow) commit(ctx context.Context, s *session.Session) error {
	if err := w.st.Commit(ctx, s, ""); err != nil {
		return fmt.Errorf("lineage: commit %s (%s): %w", s.ID(), s.Lineage().Op, err)
	}
	return nil
}
