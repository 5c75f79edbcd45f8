package rath_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/internal/syncbuf"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// launches counts the calls of the launch tool that ran.
var launches atomic.Int64

// risky is a workflow whose agent calls launch, a tool that is not
// idempotent and whose risk is high, once.
func init() {
	rath.RegisterWorkflow(rath.Workflow{Name: "risky", Description: "calls a high-risk tool",
		Build: func(context.Context, *rath.Runtime) (flow.Module, *session.Session, error) {
			launch, err := tool.FuncWith("launch", "Launch it.", func(context.Context, tool.Env, struct{}) (string, error) {
				launches.Add(1)
				return "launched", nil
			}, tool.WithRisk[struct{}](tool.RiskHigh))
			if err != nil {
				return nil, nil, err
			}
			m := scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
				if last := req.Messages[len(req.Messages)-1]; last.Role == session.RoleTool {
					return model.Response{Text: "done"}, nil
				}
				return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("l1", "launch", `{}`)}}, nil
			})
			a, err := agent.New(agent.Config{Name: "launcher", Model: m, Tools: []tool.Tool{launch}, MaxSteps: 4})
			return flow.Sequential(a), session.FromUser("launch"), err
		}})
}

// syncBuffer is a log's buffer, read while decisions write it.
type syncBuffer = syncbuf.Buffer

// Without a policy directory the built-in rule still decides: a call to a
// non-idempotent high-risk tool waits for approval (and nothing else is
// recorded as decided); a policy written later takes effect without
// reopening the runtime; a rewrite that breaks it is logged and keeps its
// last good rules.
func TestRuntimeBuiltinPolicyWithoutADirectory(t *testing.T) {
	ctx := context.Background()
	t.Setenv("RATH_POLICIES", "")
	home := t.TempDir()
	var log syncBuffer
	rt, err := rath.Open(ctx, rath.Config{Home: home, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Policy == nil {
		t.Fatal("a runtime without a policy directory decides nothing")
	}
	before := launches.Load()
	out, err := rt.Run(ctx, "risky")
	if !errors.Is(err, agent.ErrPaused) {
		t.Fatalf("a high-risk call without a policy directory: %v, want it paused for approval", err)
	}
	if launches.Load() != before {
		t.Fatal("the high-risk call ran without approval")
	}
	var decisions []string
	for _, c := range out.All() {
		if c.Decision != nil && c.Decision.Selector == agent.PolicySelector {
			decisions = append(decisions, c.Decision.Choice+" "+c.Decision.Reason)
		}
	}
	if len(decisions) != 1 || !strings.HasPrefix(decisions[0], "approve tool launch (call l1): rule "+policy.RuleBuiltin) {
		t.Fatalf("decisions recorded: %q, want the built-in rule's approval alone", decisions)
	}

	// A policy written later takes effect.
	path := filepath.Join(home, "policies", "default", "default.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	trusted := `{"rules": [{"name": "trusted", "when": "action.kind == 'tool' && action.tool == 'launch'", "effect": "allow"}]}`
	if err := os.WriteFile(path, []byte(trusted), 0o644); err != nil {
		t.Fatal(err)
	}
	launch := policy.Action{Kind: policy.KindTool, Tool: "launch", Risk: policy.RiskHigh}
	waitDecision(t, rt.Policy, launch, func(d policy.Decision) bool { return d.Rule == "trusted" })
	if !strings.Contains(log.String(), path) {
		t.Fatalf("the new policy is not logged:\n%s", log.String())
	}
	if _, err := rt.Run(ctx, "risky"); err != nil || launches.Load() != before+1 {
		t.Fatalf("under the policy written later: %v, %d launches", err, launches.Load()-before)
	}

	// Broken by a rewrite: logged, naming the file and the rule; the last
	// good rules stay, with the built-in rule.
	if err := os.WriteFile(path, []byte(`{"rules": [{"name": "half-written", "when": "action.tool ==", "effect": "allow"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), `rule \"half-written\"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the broken rewrite is not logged:\n%s", log.String())
		}
		decide(t, rt.Policy, launch)
		time.Sleep(10 * time.Millisecond)
	}
	if got := decide(t, rt.Policy, launch); got.Rule != "trusted" {
		t.Fatalf("after a broken rewrite: %s, want the last good rule", got)
	}
	if got := decide(t, rt.Policy, policy.Action{Kind: policy.KindTool, Tool: "run_command", Risk: policy.RiskHigh}); got.Effect != policy.Approve || got.Rule != policy.RuleBuiltin {
		t.Fatalf("after a broken rewrite: run_command is %s, want the built-in rule", got)
	}
}

func decide(t *testing.T, d policy.Decider, a policy.Action) policy.Decision {
	t.Helper()
	got, err := d.Decide(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// waitDecision asks d about a until ok holds, failing after a deadline.
func waitDecision(t *testing.T, d policy.Decider, a policy.Action, ok func(policy.Decision) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := decide(t, d, a)
		if ok(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%+v: still %s", a, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
