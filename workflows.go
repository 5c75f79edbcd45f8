package rath

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// WorkflowLabel is the store label naming the registered workflow a run's
// output came from, so that it can be replayed by id.
const WorkflowLabel = "rath.workflow"

// Workflow is a named, registered workflow: `rath run NAME` builds and runs
// it, `rath replay ID` rebuilds it to replay a run.
type Workflow struct {
	Name        string
	Description string
	// Version is the workflow's declared version: with the build's digest
	// it makes the revision a cluster run is pinned to (a worker takes over
	// only runs of a revision it serves).
	Version string
	// TakesInput says Build reads the run's input text (InputText): a run
	// given input for a workflow that does not take any is refused.
	TakesInput bool
	// Params declares the named parameters a run may be given (RunArgs,
	// `rath run NAME --arg k=v`): a run given a parameter not declared
	// here, or not given a required one, is refused. Build reads them
	// with Args.
	Params []Param
	// Build returns the module and the input of a run.
	Build func(ctx context.Context, rt *Runtime) (flow.Module, *session.Session, error)
}

// Param declares a named parameter of a workflow.
type Param struct {
	Name        string
	Description string
	// Required: a run must be given it.
	Required bool
	// Default is its value when a run is not given it (optional
	// parameters only; "" leaves it out of Args).
	Default string
}

// RunArgsLabel is the store label on a run's input session holding the
// parameters the run was given (JSON), so that replaying it builds its
// workflow alike.
const RunArgsLabel = "rath.run.args"

var (
	wfMu      sync.RWMutex
	workflows = map[string]Workflow{}
)

// RegisterWorkflow makes w available by name; registering a name twice
// panics.
func RegisterWorkflow(w Workflow) {
	wfMu.Lock()
	defer wfMu.Unlock()
	if _, dup := workflows[w.Name]; dup {
		panic("rath: workflow " + w.Name + " registered twice")
	}
	workflows[w.Name] = w
}

// Workflows lists the registered workflows by name.
func Workflows() []Workflow {
	wfMu.RLock()
	defer wfMu.RUnlock()
	out := make([]Workflow, 0, len(workflows))
	for _, w := range workflows {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrUnknownWorkflow: no workflow is registered under a name.
var ErrUnknownWorkflow = fmt.Errorf("rath: unknown workflow")

// LookupWorkflow returns the workflow registered as name (an error wrapping
// ErrUnknownWorkflow if there is none).
func LookupWorkflow(name string) (Workflow, error) { return lookup(name) }

type inputKey struct{}

// WithInput returns ctx carrying a run's input text, for Build to read.
func WithInput(ctx context.Context, text string) context.Context {
	return context.WithValue(ctx, inputKey{}, text)
}

// InputText returns the input text a run was given (ok false: none; Build
// uses its own).
func InputText(ctx context.Context) (text string, ok bool) {
	text, ok = ctx.Value(inputKey{}).(string)
	return text, ok
}

func lookup(name string) (Workflow, error) {
	wfMu.RLock()
	defer wfMu.RUnlock()
	w, ok := workflows[name]
	if !ok {
		return w, fmt.Errorf("%w %q", ErrUnknownWorkflow, name)
	}
	return w, nil
}

// Run builds the workflow called name and runs it durably: the input and
// every step are committed, and the output is labelled with the workflow's
// name. The output is returned with any error (a failed run's output holds
// what was done).
//
// The run's id is its input session's. While it runs, this process owns
// it (Owner, recorded on the input with the workflow's name and input
// text) and writes under a fencing epoch of its own; the input is active,
// then closed or failed with the output. A run whose process dies is
// shown interrupted (Statuses) and Resume finishes it. An input that Build
// took from the store is forked, so that the run's input is its own.
// The runtime's policy (Config.Policies), unless ctx carries a decider
// already, decides the actions of the run's agents (WithPolicy).
func (r *Runtime) Run(ctx context.Context, name string, opts ...RunOption) (*session.Session, error) {
	ctx = r.WithPolicy(ctx)
	var o runOptions
	for _, f := range opts {
		f(&o)
	}
	w, err := lookup(name)
	if err != nil {
		return nil, err
	}
	bctx, err := o.buildContext(ctx, w)
	if err != nil {
		return nil, err
	}
	m, in, err := w.Build(bctx, r)
	if err != nil {
		return nil, fmt.Errorf("rath: build %s: %w", name, err)
	}
	if o.from != "" {
		if in, err = r.ForkFrom(ctx, o.from, in); err != nil {
			return nil, err
		}
	} else if _, err := r.Store.Info(ctx, in.ID()); err == nil {
		in = in.Fork() // a stored session is no new run's to own: run on a fork
	}
	lk, err := r.lockRun(ctx, in.ID(), nil)
	if err != nil {
		return nil, fmt.Errorf("rath: run %s: %w", name, err)
	}
	if err := commitNew(ctx, r.Store, in); err != nil {
		return nil, errors.Join(fmt.Errorf("rath: run %s: commit its input: %w", name, err), lk.release())
	}
	labels := map[string]string{RunWorkflowLabel: name, RunInputLabel: inputLabel(o.input), runctx.StartLabel: string(in.Head())}
	if o.args != nil {
		labels[RunArgsLabel] = argsLabel(o.args)
	}
	own, err := r.own(bctx, in.ID(), lk, labels)
	if err != nil {
		return nil, fmt.Errorf("rath: run %s: %w", name, err)
	}
	o.start(in.ID())
	rctx, stopped := o.stoppable(own.ctx)
	out, err := flow.Run(flow.WithOutputLabels(rctx, map[string]string{WorkflowLabel: name}), r.Store, m, in)
	stopped()
	return r.finish(own, name, out, err)
}

// Replay re-executes the run whose output is id with its registered
// workflow (named by the output's WorkflowLabel, built with the input text
// its run recorded), serving everything from the record; a difference is
// a *replay.Divergence.
func (r *Runtime) Replay(ctx context.Context, id session.ID) (*session.Session, error) {
	ctx = r.WithPolicy(ctx)
	info, err := r.Store.Info(ctx, id)
	if err != nil {
		return nil, err
	}
	name := info.Labels[WorkflowLabel]
	if name == "" {
		return nil, fmt.Errorf("rath: session %s is not the output of a registered workflow's run (no %s label)", id, WorkflowLabel)
	}
	w, err := lookup(name)
	if err != nil {
		return nil, err
	}
	rec, err := r.Store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	m, _, err := w.Build(r.recordedInput(ctx, info), r)
	if err != nil {
		return nil, fmt.Errorf("rath: build %s: %w", name, err)
	}
	return replay.Run(ctx, m, rec)
}

// recordedInput is ctx with the input text and the parameters the run of
// output info was given, if its run recorded them.
func (r *Runtime) recordedInput(ctx context.Context, info store.Info) context.Context {
	run, err := r.Store.Info(ctx, session.ID(info.Labels[runctx.Label]))
	if err != nil {
		return ctx
	}
	if st, err := parseRun(run); err == nil && st.input != nil {
		ctx = WithInput(ctx, *st.input)
	}
	return withRecordedArgs(ctx, run)
}

// RunDossier runs the workflow called name (as Run) and writes the evidence
// dossier of its output into dir. It returns the output and the dossier's
// index.html path; a failed run's output and dossier come back with the
// error.
func (r *Runtime) RunDossier(ctx context.Context, name, dir string) (*session.Session, string, error) {
	out, err := r.Run(ctx, name)
	if out == nil {
		return nil, "", err
	}
	index, derr := export.Dossier(ctx, r.Store, out.ID(), dir)
	return out, index, errors.Join(err, derr)
}
