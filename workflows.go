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
	// Build returns the module and the input of a run.
	Build func(ctx context.Context, rt *Runtime) (flow.Module, *session.Session, error)
}

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
func (r *Runtime) Run(ctx context.Context, name string) (*session.Session, error) {
	w, err := lookup(name)
	if err != nil {
		return nil, err
	}
	m, in, err := w.Build(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("rath: build %s: %w", name, err)
	}
	out, err := flow.Run(flow.WithOutputLabels(ctx, map[string]string{WorkflowLabel: name}), r.Store, m, in)
	if out != nil {
		if err != nil {
			// Run labelled it only if it committed it (a run that
			// stopped did not); try here, as before.
			_ = r.Store.SetLabel(ctx, out.ID(), WorkflowLabel, name)
		}
		status := store.StatusClosed
		if err != nil {
			status = store.StatusFailed
		}
		if serr := store.MoveTo(ctx, r.Store, out.ID(), status); serr != nil && err == nil {
			err = serr
		}
	}
	return out, err
}

// Replay re-executes the run whose output is id with its registered
// workflow (named by the output's WorkflowLabel), serving everything from
// the record; a difference is a *replay.Divergence.
func (r *Runtime) Replay(ctx context.Context, id session.ID) (*session.Session, error) {
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
	m, _, err := w.Build(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("rath: build %s: %w", name, err)
	}
	return replay.Run(ctx, m, rec)
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
