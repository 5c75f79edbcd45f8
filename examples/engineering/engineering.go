package engineering

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/session"
)

// Name is the workflow's registered name.
const Name = "engineering"

// Scope is the memory scope the research agent recalls from and the
// failure patterns are remembered in.
const Scope = "project/engineering-demo"

// Task is the user's request the run starts from.
const Task = "Fix the bug reported in ISSUE.md: word counts are wrong for text with line breaks. " +
	"The workspace holds the wordcount repository; the fix is done when `go test ./...` passes."

func init() {
	rath.RegisterWorkflow(rath.Workflow{
		Name:        Name,
		Description: "SWE-bench-like: research, patch, real go test in a sandbox, a rejected branch, memory of the failure",
		Build:       Build,
	})
}

// Build returns the workflow and its input: the task, placed on the
// sandbox backend Backend chooses.
func Build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	backend, _ := Backend(ctx)
	gobin, err := goBinary()
	if err != nil {
		return nil, nil, err
	}
	spec, err := sandboxSpec(backend, gobin, rt.Home)
	if err != nil {
		return nil, nil, err
	}
	w, err := newWorkflow(ctx, rt, gobin)
	if err != nil {
		return nil, nil, err
	}
	return w, session.FromUser(Task).To(backend, spec), nil
}

// Result is what Run did.
type Result struct {
	// Session is the run's output: the attempts merged, rejected ones
	// first.
	Session *session.Session
	// Backend is the sandbox backend the tests ran on.
	Backend string
	// Dossier is the path of the dossier's index.html.
	Dossier string
	// Attempts counts the patches the validator judged.
	Attempts int
}

// Run runs the workflow on rt and writes the evidence dossier of its
// output into dossierDir. A run that fails still returns what it did, and
// its dossier, with the error.
func Run(ctx context.Context, rt *rath.Runtime, dossierDir string) (*Result, error) {
	out, err := rt.Run(ctx, Name)
	if out == nil {
		if err == nil {
			err = errors.New("engineering: the run returned no session")
		}
		return nil, err
	}
	res := &Result{Session: out, Backend: out.Placement().Backend, Attempts: len(Verdicts(out))}
	index, derr := export.Dossier(ctx, rt.Store, out.ID(), dossierDir)
	if derr != nil {
		derr = fmt.Errorf("engineering: dossier: %w", derr)
	}
	res.Dossier = index
	return res, errors.Join(err, derr)
}
