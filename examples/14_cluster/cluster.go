package clusterdemo

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Config is the run's input.
type Config struct {
	Steps      int  `json:"steps"`
	LatencyMS  int  `json:"latency_ms"`
	Idempotent bool `json:"idempotent"`
	SleepMS    int  `json:"sleep_ms"`
	SleepOn    int  `json:"sleep_on"` // sleep on this effect only (0: on every one)
	// SleepBefore sleeps before the effect instead of after it, having
	// noted the call as begun in the effect log's begun log (BegunLog): a
	// process paused in that sleep has begun the call but not made its
	// effect. Only a call's first execution sleeps.
	SleepBefore bool `json:"sleep_before"`
	Approval    bool `json:"approval"`
	// ToolApproval makes every record_effect call wait for a person's
	// approval (the agent pauses; `rath approve` answers).
	ToolApproval bool `json:"tool_approval"`
	// Workspace places the run on a local sandbox, and each effect is
	// also appended to workspace.log in its workspace (once: the tool looks
	// for its key there first when it is idempotent).
	Workspace bool `json:"workspace"`
	// Sandbox is the backend a Workspace run is placed on (default
	// "local"; "opensandbox", "e2b" or "cube" for a remote sandbox, which
	// does not pin the run to a host).
	Sandbox string `json:"sandbox"`
}

// WorkspaceLog is the file in a run's workspace that record_effect
// appends to when Config.Workspace is set.
const WorkspaceLog = "workspace.log"

// DefaultInput is the input of a run given none.
const DefaultInput = `{"steps": 5, "latency_ms": 20, "idempotent": true}`

func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "cluster", Version: "1", TakesInput: true, Build: Build,
		Description: "a run for the Agent Cluster: tool calls with effects that must happen once"})
}

// ParseConfig reads a run's input.
func ParseConfig(text string) (Config, error) {
	var c Config
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return c, fmt.Errorf("%w: cluster example: the input is not a JSON config: %w", rath.ErrBadInput, err)
	}
	if c.Steps < 0 || c.Steps > 10000 || c.LatencyMS < 0 || c.SleepMS < 0 {
		return c, fmt.Errorf("%w: cluster example: steps must be 0..10000, latency_ms and sleep_ms not negative", rath.ErrBadInput)
	}
	if c.Sandbox != "" && !c.Workspace {
		return c, fmt.Errorf("%w: cluster example: sandbox %q is set without workspace", rath.ErrBadInput, c.Sandbox)
	}
	return c, nil
}

// Build builds the workflow for the run's input (rath.InputText).
func Build(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	text, ok := rath.InputText(ctx)
	if !ok {
		text = DefaultInput
	}
	cfg, err := ParseConfig(text)
	if err != nil {
		return nil, nil, err
	}
	log := EffectLog(rt.Home)
	in := session.FromUser(text)
	if cfg.Workspace {
		backend := cfg.Sandbox
		if backend == "" {
			backend = "local"
		}
		in = in.To(backend, session.Spec{})
	}
	if !cfg.Approval {
		a, err := newAgent(rt, "worker", cfg, cfg.Steps, log)
		return a, in, err
	}
	first, err := newAgent(rt, "before", cfg, cfg.Steps/2, log)
	if err != nil {
		return nil, nil, err
	}
	second, err := newAgent(rt, "after", cfg, cfg.Steps, log) // goes on to steps results in all
	if err != nil {
		return nil, nil, err
	}
	return flow.Sequential(first, flow.Approval("release", "go on with the remaining effects"), second), in, nil
}

// EffectLog is where the tool writes its effects.
func EffectLog(home string) string {
	if p := envEffectLog(); p != "" {
		return p
	}
	return filepath.Join(home, "effects.log")
}

func newAgent(rt *rath.Runtime, name string, cfg Config, steps int, log string) (*agent.Agent, error) {
	opts := []tool.Option[effectArgs]{}
	if cfg.Idempotent {
		opts = append(opts, tool.Idempotent[effectArgs]())
	}
	if cfg.Workspace {
		opts = append(opts, tool.WithResources(func(effectArgs) []tool.Resource { return []tool.Resource{tool.PathWrite(WorkspaceLog)} }))
	}
	t, err := tool.FuncWith("record_effect", "Record one effect of this run in the effect log.",
		func(ctx context.Context, env tool.Env, in effectArgs) (string, error) {
			return record(ctx, log, env, in, cfg)
		}, opts...)
	if err != nil {
		return nil, err
	}
	var approve []string
	if cfg.ToolApproval {
		approve = []string{"record_effect"}
	}
	ac := agent.Config{Name: name, Instructions: "Record each effect with record_effect, one per step, then say how many you recorded.",
		Model: stepper(steps, time.Duration(cfg.LatencyMS)*time.Millisecond), Tools: []tool.Tool{t}, MaxSteps: steps + 2, NeedApproval: approve}
	if cfg.Workspace {
		ac.Sandboxes = rt.Sandboxes
	}
	return agent.New(ac)
}

// stepper is the scripted model: it calls record_effect until the
// transcript holds steps results (the run's, earlier agents' included),
// then answers. What it says depends on
// the transcript alone, so a resumed run asks it the same questions.
func stepper(steps int, latency time.Duration) model.Model {
	return scripted.Func(func(ctx context.Context, req *model.Request) (model.Response, error) {
		if latency > 0 {
			select {
			case <-ctx.Done():
				return model.Response{}, ctx.Err()
			case <-time.After(latency):
			}
		}
		done := 0
		for _, m := range req.Messages {
			if m.Role == session.RoleTool {
				done++
			}
		}
		if done >= steps {
			return model.Response{Text: fmt.Sprintf("recorded %d effects", done), FinishReason: "stop",
				Usage: session.Usage{InputTokens: 40, OutputTokens: 6}}, nil
		}
		args, _ := json.Marshal(effectArgs{N: done + 1})
		return model.Response{ToolCalls: []session.ToolCall{{ID: fmt.Sprintf("call_%d", done+1), Name: "record_effect", Args: args}},
			FinishReason: "tool_calls", Usage: session.Usage{InputTokens: 40, OutputTokens: 12}}, nil
	})
}
