package rath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// RunOption adjusts Run (and Resume, where it applies).
type RunOption func(*runOptions)

type runOptions struct {
	input   *string
	args    map[string]string
	from    session.ID
	started func(run session.ID)
	stop    <-chan struct{}
	grace   time.Duration
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

// RunArgs gives the run named parameters, for the workflow's Build to
// read (Args). Each must be one the workflow declares (Workflow.Params),
// and every required one must be given. They are recorded on the run.
func RunArgs(args map[string]string) RunOption {
	return func(o *runOptions) { o.args = maps.Clone(args) }
}

// buildContext is ctx for w's Build: with the run's input, if given, and
// its parameters, checked against those w declares (with their defaults).
func (o *runOptions) buildContext(ctx context.Context, w Workflow) (context.Context, error) {
	args, err := checkArgs(w, o.args)
	if err != nil {
		return nil, err
	}
	if args != nil {
		o.args = args
		ctx = context.WithValue(ctx, argsKey{}, args)
	}
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

// ForkFrom forks the stored session id as a run's input (RunFrom; a
// cluster run on a session). The fork keeps id's placement, or takes
// base's (the workflow's own input; nil for none) if id has none.
func (r *Runtime) ForkFrom(ctx context.Context, id session.ID, base *session.Session) (*session.Session, error) {
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

// Errors of a run's parameters (RunArgs).
var (
	// ErrUnknownParam: a run was given a parameter its workflow does not
	// declare.
	ErrUnknownParam = errors.New("rath: unknown parameter")
	// ErrMissingParam: a run was not given a parameter its workflow
	// requires.
	ErrMissingParam = errors.New("rath: missing parameter")
)

type argsKey struct{}

// Args returns the parameters the run was given (with the defaults of
// those it was not), for Build to read; nil when it has none.
func Args(ctx context.Context) map[string]string {
	args, _ := ctx.Value(argsKey{}).(map[string]string)
	return args
}

// Arg returns the run's parameter name ("" if it has none of that name).
func Arg(ctx context.Context, name string) string { return Args(ctx)[name] }

// withRecordedArgs returns ctx carrying the parameters recorded on run
// (the run's input session, RunArgsLabel), as its Build saw them; ctx
// itself if it recorded none.
func withRecordedArgs(ctx context.Context, run store.Info) context.Context {
	raw, ok := run.Labels[RunArgsLabel]
	if !ok {
		return ctx
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(raw), &args); err != nil || args == nil {
		return ctx
	}
	return context.WithValue(ctx, argsKey{}, args)
}

// checkArgs checks args against the parameters w declares and adds the
// defaults of those not given; nil when there are none.
func checkArgs(w Workflow, args map[string]string) (map[string]string, error) {
	declared := make(map[string]Param, len(w.Params))
	names := make([]string, 0, len(w.Params))
	for _, p := range w.Params {
		declared[p.Name] = p
		names = append(names, p.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if _, ok := declared[k]; ok {
			continue
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%w %q: %s takes no parameters", ErrUnknownParam, k, w.Name)
		}
		return nil, fmt.Errorf("%w %q: %s takes %s", ErrUnknownParam, k, w.Name, strings.Join(names, ", "))
	}
	out := maps.Clone(args)
	for _, p := range w.Params {
		if _, ok := args[p.Name]; ok {
			continue
		}
		if p.Required {
			what := ""
			if p.Description != "" {
				what = ": " + p.Description
			}
			return nil, fmt.Errorf("%w %q: %s requires it%s", ErrMissingParam, p.Name, w.Name, what)
		}
		if p.Default != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[p.Name] = p.Default
		}
	}
	return out, nil
}

// argsLabel is the label value recording a run's parameters (JSON).
func argsLabel(args map[string]string) string {
	b, _ := json.Marshal(args)
	return string(b)
}
