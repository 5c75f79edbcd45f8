// Package agent is one reusable Session -> Session layer: instructions, a
// model, tools and (later) memory, run as a step loop that records every
// piece of evidence in the session — the model call, the assistant turn,
// every tool result with its arguments, output, duration, sandbox and
// workspace effects — and, when a store is given, commits each step before
// the next.
package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/tool"
)

var (
	// ErrMaxSteps: the loop reached Config.MaxSteps without a final answer.
	ErrMaxSteps = errors.New("agent: step limit reached")
	// ErrConfig: the agent's configuration is unusable.
	ErrConfig = errors.New("agent: bad configuration")
)

// Config configures an agent.
type Config struct {
	// Name names the agent; its output sessions have op "agent:<Name>".
	Name         string
	Instructions string
	Model        model.Model
	// Tools are the tools offered; nothing else is.
	Tools []tool.Tool
	// MaxSteps bounds the model calls of one Forward (default 20).
	MaxSteps int
	// Store, if set, receives every step durably before the next.
	Store store.Store
	// Sandboxes opens the sandboxes sessions are placed on (a private pool
	// if nil).
	Sandboxes *sandbox.Pool
	// Params are the model parameters of every request.
	Params model.Params
	// NeedApproval names tools whose calls wait for a human's verdict: the
	// run records an approval request, marks the session paused in the
	// store, and ends with ErrPaused; Resume continues it.
	NeedApproval []string
	// Memory, if set, is recalled once before the first step — the hits
	// enter the model's view as a memory chunk — from MemoryScopes only
	// ("project/rath", ...), at most RecallK entries (default 5).
	Memory       memory.Memory
	MemoryScopes []string
	RecallK      int
	// CommitOnForward archives the finished run into Memory (and, with
	// ExtractFacts, the facts the agent's model extracts, into the first
	// of MemoryScopes).
	CommitOnForward bool
	ExtractFacts    bool
	// Policy limits the tool calls (nil: none beyond the tools offered).
	Policy *tool.Policy
	// Decider decides every action of a run before it happens — each
	// model call, tool call, command a call runs (exec), host it reaches
	// (egress), memory read and write — and each decision is a decision
	// chunk (selector "policy"). A denied model call ends the run
	// (policy.ErrDenied); a denied tool call gets an error result of kind
	// policy and the loop goes on; a call to approve pauses the run as
	// NeedApproval does; a constrained call runs within its constraints; a
	// denied memory operation is skipped. Nil: the decider of the run's
	// context (policy.From), and none if it has none.
	Decider policy.Decider
	// ResultLimit bounds the tool output the model sees (default 32 KiB);
	// the full size and hash are recorded.
	ResultLimit int
}

// Agent is a configured agent; it is safe for concurrent use.
type Agent struct {
	cfg      Config
	tools    map[string]tool.Tool
	specs    []model.ToolSpec
	seed     *model.Request // no messages; the first request of a run Continues it
	node     string
	approval map[string]bool
}

// New checks cfg and returns the agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("%w: an agent needs a Name", ErrConfig)
	}
	if cfg.Model == nil {
		return nil, fmt.Errorf("%w: agent %s has no Model", ErrConfig, cfg.Name)
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 20
	}
	if cfg.ResultLimit <= 0 {
		cfg.ResultLimit = 32 << 10
	}
	if cfg.Memory != nil && len(cfg.MemoryScopes) == 0 {
		return nil, fmt.Errorf("%w: agent %s has Memory but no MemoryScopes to recall from", ErrConfig, cfg.Name)
	}
	if cfg.Sandboxes == nil {
		cfg.Sandboxes = sandbox.NewPool()
	}
	a := &Agent{cfg: cfg, tools: map[string]tool.Tool{}, node: "agent:" + cfg.Name, approval: map[string]bool{}}
	for _, n := range cfg.NeedApproval {
		a.approval[n] = true
	}
	for _, t := range cfg.Tools {
		if _, dup := a.tools[t.Name()]; dup {
			return nil, fmt.Errorf("%w: agent %s offers two tools named %s", ErrConfig, cfg.Name, t.Name())
		}
		a.tools[t.Name()] = t
		a.specs = append(a.specs, model.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	// Every request of every run has these tools and parameters: their
	// JSON, which the request digest covers, is made once.
	a.seed = &model.Request{Tools: a.specs, Params: cfg.Params}
	a.seed.Digest()
	return a, nil
}

// Name returns the agent's name.
func (a *Agent) Name() string { return a.cfg.Name }

// Forward runs the agent on s and returns its output session: a new
// session derived from s (lineage parent s, op "agent:<name>") holding the
// whole run. On failure the returned session, if not nil, holds what was
// done up to the failure, recorded as an error chunk. The run's events go
// to the sink of WithEvents, if ctx has one.
func (a *Agent) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	var out *session.Session
	sink := eventSink(ctx)
	for ev, err := range a.Run(ctx, s) {
		if sink != nil && err == nil {
			sink(a.cfg.Name, ev)
		}
		if ev.Session != nil {
			out = ev.Session
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
