package rath

import (
	"context"
	"fmt"

	"github.com/openrath/rath/session"
)

// RunOption adjusts Run (and Resume, where it applies).
type RunOption func(*runOptions)

type runOptions struct {
	input   *string
	from    session.ID
	started func(run session.ID)
}

// RunInput gives the run its input text, for the workflow's Build to read
// (InputText). The workflow must take input (Workflow.TakesInput). The
// text is recorded on the run, so that Resume builds the workflow alike.
func RunInput(text string) RunOption { return func(o *runOptions) { o.input = &text } }

// RunFrom runs the workflow on a fork of the stored session id instead of
// on the input its Build makes, so that work begun elsewhere — another
// run, a session imported from OpenRath-Python — carries on. The fork is
// the run's input: its lineage parent is id. It keeps id's sandbox
// placement; a session placed nowhere takes that of the workflow's own
// input.
func RunFrom(id session.ID) RunOption { return func(o *runOptions) { o.from = id } }

// OnStart has the run call fn with its id (its input session's) once the
// run is recorded and owned, before its first step (Resume: before it
// replays).
func OnStart(fn func(run session.ID)) RunOption { return func(o *runOptions) { o.started = fn } }

// buildContext is ctx for w's Build: with the run's input, if given.
func (o *runOptions) buildContext(ctx context.Context, w Workflow) (context.Context, error) {
	if o.input == nil {
		return ctx, nil
	}
	if !w.TakesInput {
		return nil, fmt.Errorf("%w: %s (run it without input)", ErrTakesNoInput, w.Name)
	}
	return WithInput(ctx, *o.input), nil
}

func (o *runOptions) start(run session.ID) {
	if o.started != nil {
		o.started(run)
	}
}

// forkFrom forks the stored session id as a run's input. The fork keeps
// id's placement, or takes base's (the workflow's own input) if id has
// none.
func (r *Runtime) forkFrom(ctx context.Context, id session.ID, base *session.Session) (*session.Session, error) {
	s, err := r.Store.Load(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("rath: run from %s: %w", id, err)
	}
	f := s.Fork()
	if f.Placement().Backend == "" && base != nil {
		if p := base.Placement(); p.Backend != "" {
			f = f.To(p.Backend, p.Spec)
		}
	}
	return f, nil
}
