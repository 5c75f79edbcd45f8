package engineering

import (
	"context"
	"fmt"
	"regexp"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/internal/exmodel"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

// The agents' instructions.
const (
	researchInstructions = "You are the research agent of a small software team. Read the issue (ISSUE.md) and the code it is about " +
		"with read_file, list_files and grep, and weigh what memory recalls from earlier runs. Change nothing. " +
		"Answer in one short paragraph: where the bug is (file and line), what causes it, and which tests cover it."
	coderInstructions = "You are the coding agent. Fix the bug the issue describes, using the research above: edit the code " +
		"with edit_file (an exact text replacement). Change only what the fix needs and never the tests. The tester runs the " +
		"tests after you, so do not try to. End with one or two sentences saying what you changed."
	testerInstructions = "You are the tester. Run `go test ./...` in the workspace once with run_command " +
		"(args [\"go\", \"test\", \"./...\"]), then report the exit code and the names of the failing tests, if any, in one sentence. Change nothing."
)

// Workflow is the engineering workflow: check the repository out into the
// sandbox, research the issue, then fix it in attempts.
type Workflow struct {
	Checkout *Checkout
	Research *agent.Agent
	Fix      *Attempts
}

// newWorkflow builds the workflow's agents and modules on rt.
func newWorkflow(ctx context.Context, rt *rath.Runtime, gobin string) (*Workflow, error) {
	mem, err := rt.Memory(ctx)
	if err != nil {
		return nil, fmt.Errorf("engineering: memory: %w", err)
	}
	pick := func(prefix string, step func(*script, view) model.Response) (model.Model, error) {
		m, err := exmodel.Pick(ctx, newScript(prefix, step))
		if err != nil {
			return nil, fmt.Errorf("engineering: model: %w", err)
		}
		return m, nil
	}
	mk := func(cfg agent.Config, step func(*script, view) model.Response) (*agent.Agent, error) {
		m, err := pick(cfg.Name, step)
		if err != nil {
			return nil, err
		}
		cfg.Model, cfg.Store, cfg.Sandboxes = m, rt.Store, rt.Sandboxes
		a, err := agent.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("engineering: %w", err)
		}
		return a, nil
	}
	researcher, err := mk(agent.Config{Name: "researcher", Instructions: researchInstructions, MaxSteps: 8,
		Tools:  []tool.Tool{builtin.ReadFile(), builtin.ListFiles(), builtin.Glob(), builtin.Grep()},
		Memory: mem, MemoryScopes: []string{Scope}}, research)
	if err != nil {
		return nil, err
	}
	coder, err := mk(agent.Config{Name: "coder", Instructions: coderInstructions, MaxSteps: 12,
		Tools: []tool.Tool{builtin.ReadFile(), builtin.ListFiles(), builtin.Grep(), builtin.EditFile(), builtin.WriteFile()}}, code)
	if err != nil {
		return nil, err
	}
	tester, err := mk(agent.Config{Name: "tester", Instructions: testerInstructions, MaxSteps: 4,
		Tools:  []tool.Tool{builtin.RunCommand()},
		Policy: &tool.Policy{AllowCommands: []*regexp.Regexp{regexp.MustCompile(`^go (test|vet)( |$)`)}, MaxTotal: 3}}, test)
	if err != nil {
		return nil, err
	}
	return &Workflow{
		Checkout: &Checkout{sandboxes: rt.Sandboxes, home: rt.Home, gobin: gobin},
		Research: researcher,
		Fix: &Attempts{Coder: coder, Tester: tester, Check: flow.Validate(Validator, TestsPass), Max: 3,
			sandboxes: rt.Sandboxes, memory: mem, scope: Scope},
	}, nil
}

// Forward implements flow.Module. Each stage runs under its own node path
// (checkout, research, fix) and what it adds is stored, so that the
// lineage graph links every branch to the run's input.
func (w *Workflow) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	s, err := w.Checkout.Forward(runctx.WithPath(ctx, "checkout"), s)
	if err == nil {
		err = commit(ctx, s)
	}
	if err != nil {
		return s, err
	}
	if s, err = w.Research.Forward(runctx.WithPath(ctx, "research"), s); err != nil {
		return s, err
	}
	return w.Fix.Forward(runctx.WithPath(ctx, "fix"), s)
}

// commit stores s at its head in the run's store (runctx.Store; a
// replay has none) unless it is there already, and labels a session new to
// the store with the run it belongs to.
func commit(ctx context.Context, s *session.Session) error {
	st := runctx.Store(ctx)
	if st == nil {
		return nil
	}
	prev := session.ChunkID("")
	info, err := st.Info(ctx, s.ID())
	switch {
	case err == nil && info.Head == s.Head():
		return nil
	case err == nil:
		prev = info.Head
	}
	if err := st.Commit(ctx, s, prev); err != nil {
		return fmt.Errorf("engineering: commit %s: %w", s.ID(), err)
	}
	if prev == "" {
		if err := st.SetLabel(ctx, s.ID(), runctx.Label, string(runctx.ID(ctx))); err != nil {
			return fmt.Errorf("engineering: label %s: %w", s.ID(), err)
		}
	}
	return nil
}

// label sets labels on a stored session of the run.
func label(ctx context.Context, id session.ID, labels map[string]string) error {
	st := runctx.Store(ctx)
	if st == nil {
		return nil
	}
	for k, v := range labels {
		if err := st.SetLabel(ctx, id, k, v); err != nil {
			return fmt.Errorf("engineering: label %s: %w", id, err)
		}
	}
	return nil
}
