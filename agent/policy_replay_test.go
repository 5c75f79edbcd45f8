package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

func parsePolicy(t *testing.T, src string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse("replay.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A replay serves the recorded decisions, whatever the policy says now
// (or with none): the record says what was decided then. A run recorded
// without a policy replays under one.
func TestPolicyDecisionsReplay(t *testing.T) {
	ctx := context.Background()
	echo := tool.MustFunc("echo", "Echoes.", func(_ context.Context, a struct {
		Text string `json:"text"`
	}) (string, error) {
		return a.Text, nil
	})
	script := func() model.Model {
		return scripted.New(
			model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c1", "echo", `{"text":"hello"}`), session.NewToolCall("c2", "echo", `{"text":"secret"}`)}},
			model.Response{Text: "done"})
	}
	then := parsePolicy(t, `{"rules": [
		{"name": "no-secrets", "when": "action.kind == 'tool' && action.args.text == 'secret'", "effect": "deny"},
		{"name": "short", "when": "action.kind == 'tool'", "effect": "constrain", "constraints": {"max_output_bytes": 3}}]}`)
	now := parsePolicy(t, `{"default": "deny"}`)
	build := func(d policy.Decider, m model.Model) *agent.Agent {
		a, err := agent.New(agent.Config{Name: "r", Model: m, Tools: []tool.Tool{echo}, Decider: d})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	recorded, err := build(then, script()).Forward(runctx.NewRun(ctx), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range recorded.All() {
		if c.Decision != nil && c.Decision.Selector == agent.PolicySelector {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("%d decisions recorded, want 4", n)
	}
	for _, d := range []policy.Decider{then, now, nil} {
		out, err := replay.Run(ctx, build(d, scripted.New()), recorded)
		if err != nil {
			t.Fatalf("replay under %v: %v", d, err)
		}
		if out.Head() != recorded.Head() {
			t.Fatalf("replay under %v: head %s, recorded %s", d, out.Head(), recorded.Head())
		}
	}
	// Without a policy then, with one now: nothing to serve, nothing decided.
	plain, err := build(nil, script()).Forward(runctx.NewRun(ctx), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := replay.Run(ctx, build(now, scripted.New()), plain)
	if err != nil || out.Head() != plain.Head() {
		t.Fatalf("a run recorded without a policy, replayed under one: %v", err)
	}
	// A replay that decides differently from the record diverges.
	other := parsePolicy(t, `{"rules": [{"name": "x", "when": "true", "effect": "deny"}]}`)
	short := scripted.New(model.Response{Text: "done"})
	rec, err := build(parsePolicy(t, `{}`), short).Forward(runctx.NewRun(ctx), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	// Doctor the record: its decision named another model, so the replay's
	// decision on this model is not the recorded one and is made again.
	var cs []session.Chunk
	for _, c := range rec.All() {
		if c.Decision != nil {
			d := *c.Decision
			d.Reason = strings.Replace(d.Reason, "model scripted", "model other", 1)
			c.Decision = &d
		}
		c.ID, c.Parent = "", ""
		cs = append(cs, c)
	}
	doctored := session.New().Append(cs...)
	_, err = replay.Run(ctx, build(other, scripted.New()), doctored)
	var div *replay.Divergence
	if !errors.As(err, &div) {
		t.Fatalf("a different decision: %v", err)
	}
}

// The approval round trip of a run in a store, as a cluster does it: the
// policy's approve pauses the run; agent.Decide records the verdict; the
// run resumed by replay (verdicts taken from the record) serves the
// recorded decisions, takes the verdict and runs the call — or, rejected,
// refuses it.
func TestPolicyApprovalByDecideAndResume(t *testing.T) {
	for _, approve := range []bool{true, false} {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "r.db")})
		if err != nil {
			t.Fatal(err)
		}
		ran := 0
		deploy, err := tool.FuncWith("deploy", "Deploys.", func(context.Context, tool.Env, struct{}) (string, error) { ran++; return "deployed", nil },
			tool.Idempotent[struct{}]())
		if err != nil {
			t.Fatal(err)
		}
		build := func(m model.Model) *agent.Agent {
			a, err := agent.New(agent.Config{Name: "ops", Model: m, Tools: []tool.Tool{deploy},
				Decider: parsePolicy(t, `{"rules": [{"name": "ask", "when": "action.tool == 'deploy'", "effect": "approve"}]}`)})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		in := session.FromUser("ship it")
		_, err = flow.Run(ctx, st, build(scripted.New(
			model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("d1", "deploy", `{}`)}})), in)
		if !errors.Is(err, agent.ErrPaused) || ran != 0 {
			t.Fatalf("err = %v, ran %d", err, ran)
		}
		infos, err := st.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(in.ID())}, Status: []store.Status{store.StatusPaused}})
		if err != nil || len(infos) != 1 {
			t.Fatalf("paused sessions %v, %v", infos, err)
		}
		paused, err := st.Load(ctx, infos[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		verdict, err := agent.Decide(paused, agent.Verdict{Approve: approve, By: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Commit(ctx, verdict, paused.Head()); err != nil {
			t.Fatal(err)
		}
		out, err := replay.Resume(runctx.WithRecordedVerdicts(ctx), build(scripted.New(model.Response{Text: "done"})), st, in.ID())
		if err != nil {
			t.Fatal(err)
		}
		var result *session.ToolResult
		for _, c := range out.All() {
			if c.ToolResult != nil {
				result = c.ToolResult
			}
		}
		if approve && (ran != 1 || result == nil || result.Content != "deployed") ||
			!approve && (ran != 0 || result == nil || result.Error == nil || result.Error.Kind != session.ToolErrRejected) {
			t.Fatalf("approve %v: ran %d, result %+v", approve, ran, result)
		}
		st.Close()
	}
}
