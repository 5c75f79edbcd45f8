package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/local"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

// rules is a policy of the given rules (JSON objects), default allow.
func rules(t *testing.T, rs ...string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse("test.json", []byte(`{"rules": [`+strings.Join(rs, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// policyDecisions are the policy's decision chunks of s, as "choice reason".
func policyDecisions(s *session.Session) []string {
	var out []string
	for _, c := range s.All() {
		if isPolicyDecision(c) {
			out = append(out, c.Decision.Choice+" "+c.Decision.Reason)
		}
	}
	return out
}

// decided reports whether some decision of s has the choice and a reason
// starting with prefix and holding rule.
func decided(s *session.Session, choice, prefix, rule string) bool {
	for _, d := range policyDecisions(s) {
		if strings.HasPrefix(d, choice+" "+prefix) && strings.Contains(d, ": rule "+rule+": ") {
			return true
		}
	}
	return false
}

func resultsOf(s *session.Session) map[string]*session.ToolResult {
	out := map[string]*session.ToolResult{}
	for _, c := range s.All() {
		if c.ToolResult != nil {
			out[c.ToolResult.CallID] = c.ToolResult
		}
	}
	return out
}

// counted is a tool named name that counts its calls and returns "ran".
func counted(name string, n *atomic.Int32, opts ...tool.Option[struct{}]) tool.Tool {
	t, err := tool.FuncWith(name, "Counts.", func(context.Context, tool.Env, struct{}) (string, error) { n.Add(1); return "ran", nil }, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

type fetchArgs struct {
	URL string `json:"url"`
}

// fetchTool reaches the host of its url argument; pingTool declares the
// host it reaches as a resource.
func fetchTool() tool.Tool {
	return tool.MustFunc("fetch", "Fetches a URL.", func(_ context.Context, a fetchArgs) (string, error) { return "fetched " + a.URL, nil })
}

func pingTool() tool.Tool {
	t, err := tool.FuncWith("ping", "Pings the status host.", func(context.Context, tool.Env, struct{}) (string, error) { return "pong", nil },
		tool.WithResources(func(struct{}) []tool.Resource { return []tool.Resource{tool.Host("status.example.net:443")} }))
	if err != nil {
		panic(err)
	}
	return t
}

// Every action of a run is decided and recorded — allow included — with
// the rule that decided, under the run's node; with no decider nothing is.
func TestPolicyDecisionsAreChunks(t *testing.T) {
	for _, withPolicy := range []bool{true, false} {
		var n atomic.Int32
		m := scripted.New(model.Response{ToolCalls: []session.ToolCall{call("c1", "noop", `{}`)}}, model.Response{Text: "done"})
		cfg := Config{Name: "p", Model: m, Tools: []tool.Tool{counted("noop", &n)}}
		if withPolicy {
			cfg.Decider = rules(t, `{"name": "tools", "when": "action.kind == 'tool'", "effect": "allow", "reason": "tools are fine"}`)
		}
		a, _ := New(cfg)
		out, err := a.Forward(context.Background(), session.FromUser("go"))
		if err != nil {
			t.Fatal(err)
		}
		got := policyDecisions(out)
		if !withPolicy {
			if len(got) != 0 {
				t.Fatalf("decisions without a decider: %v", got)
			}
			continue
		}
		want := []string{
			"allow model scripted (step 1): rule default: no rule decided",
			"allow tool noop (call c1): rule tools: tools are fine",
			"allow model scripted (step 2): rule default: no rule decided",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || n.Load() != 1 {
			t.Fatalf("decisions:\n%s\nran %d", strings.Join(got, "\n"), n.Load())
		}
		for _, c := range out.All() {
			if isPolicyDecision(c) {
				if c.Node != "agent:p" || len(c.Decision.Candidates) != 4 || c.Tier != session.TierDurable {
					t.Fatalf("decision chunk %+v", c)
				}
			}
		}
		if err := out.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

// A denied model call ends the run with policy.ErrDenied; the model is
// not called; a model call cannot wait for approval (denied).
func TestPolicyModelCall(t *testing.T) {
	for _, effect := range []string{"deny", "approve"} {
		calls := 0
		m := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
			calls++
			return model.Response{Text: "hi"}, nil
		})
		a, _ := New(Config{Name: "m", Model: m, Decider: rules(t,
			fmt.Sprintf(`{"name": "no-models", "when": "action.kind == 'model' && action.model == 'scripted'", "effect": %q, "reason": "offline"}`, effect))})
		out, err := a.Forward(context.Background(), session.FromUser("go"))
		if !errors.Is(err, policy.ErrDenied) || calls != 0 || !strings.Contains(err.Error(), "rule no-models") {
			t.Fatalf("%s: err = %v, %d calls", effect, err, calls)
		}
		if !decided(out, "deny", "model scripted (step 1)", "no-models") {
			t.Fatalf("%s: decisions %v", effect, policyDecisions(out))
		}
		last := out.Chunk(out.Len() - 1)
		if last.Error == nil || last.Error.Code != session.ToolErrPolicy {
			t.Fatalf("%s: last chunk %+v", effect, last)
		}
	}
	// Allowed, and constrained: the call gets the policy's timeout.
	m := scripted.Func(func(ctx context.Context, _ *model.Request) (model.Response, error) {
		<-ctx.Done()
		return model.Response{}, ctx.Err()
	})
	a, _ := New(Config{Name: "m", Model: m, Decider: rules(t,
		`{"name": "quick", "when": "action.kind == 'model'", "effect": "constrain", "constraints": {"timeout": "50ms"}}`)})
	out, err := a.Forward(context.Background(), session.FromUser("go"))
	if err == nil || !strings.Contains(err.Error(), "policy's timeout of 50ms") {
		t.Fatalf("timeout: %v", err)
	}
	if last := out.Chunk(out.Len() - 1); last.Error == nil || last.Error.Code != session.ToolErrTimeout {
		t.Fatalf("timeout: last chunk %+v", last)
	}
}

// A denied tool call gets an error result of kind policy and the loop
// goes on; the tool does not run.
func TestPolicyDeniesToolCall(t *testing.T) {
	var n atomic.Int32
	m := scripted.New(model.Response{ToolCalls: []session.ToolCall{call("d1", "deploy", `{}`), call("n1", "noop", `{}`)}},
		model.Response{Text: "gave up"})
	a, _ := New(Config{Name: "ops", Model: m, Tools: []tool.Tool{counted("deploy", &n), noopTool()}, Decider: rules(t,
		`{"name": "freeze", "when": "action.tool == 'deploy'", "effect": "deny", "reason": "release freeze"}`)})
	out, err := a.Forward(context.Background(), session.FromUser("ship"))
	if err != nil {
		t.Fatal(err)
	}
	res := resultsOf(out)
	if n.Load() != 0 || res["d1"].Error == nil || res["d1"].Error.Kind != session.ToolErrPolicy ||
		!strings.Contains(res["d1"].Error.Message, "rule freeze: release freeze") || res["n1"].Error != nil {
		t.Fatalf("ran %d, results %+v %+v", n.Load(), res["d1"].Error, res["n1"])
	}
	if last := out.Chunk(out.Len() - 1); last.Assistant == nil || last.Assistant.Text != "gave up" {
		t.Fatalf("the loop did not go on: %+v", last)
	}
	if !decided(out, "deny", "tool deploy (call d1)", "freeze") || !decided(out, "allow", "tool noop (call n1)", "default") {
		t.Fatalf("decisions %v", policyDecisions(out))
	}
}

// A policy's approve pauses the run on the approval gate; approved, the
// call runs (within the rule's constraints); rejected, it is refused. A
// call the same step's policy denies gets its policy error either way.
func TestPolicyApprovalRoundTrip(t *testing.T) {
	for _, approve := range []bool{true, false} {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db")})
		if err != nil {
			t.Fatal(err)
		}
		var deploys, wipes atomic.Int32
		deploy, err := tool.FuncWith("deploy", "Deploys.", func(context.Context, tool.Env, struct{}) (string, error) {
			deploys.Add(1)
			return strings.Repeat("x", 100), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		m := scripted.New(
			model.Response{ToolCalls: []session.ToolCall{call("d1", "deploy", `{}`), call("w1", "wipe", `{}`)}},
			model.Response{Text: "finished"})
		a, _ := New(Config{Name: "ops", Model: m, Tools: []tool.Tool{deploy, counted("wipe", &wipes)}, Store: st, Decider: rules(t,
			`{"name": "ask", "when": "action.tool == 'deploy'", "effect": "approve", "reason": "deploys need a person",
			  "constraints": {"max_output_bytes": 10}}`,
			`{"name": "never", "when": "action.tool == 'wipe'", "effect": "deny"}`)})
		out, err := a.Forward(ctx, session.FromUser("ship it"))
		if !errors.Is(err, ErrPaused) || deploys.Load() != 0 {
			t.Fatalf("err = %v, ran %d", err, deploys.Load())
		}
		var req *session.Approval
		for _, c := range out.All() {
			if c.Approval != nil {
				if req != nil {
					t.Fatal("more than one approval requested (the denied call asks for none)")
				}
				req = c.Approval
			}
		}
		if req == nil || req.CallID != "d1" || req.Verdict != session.VerdictRequested ||
			!strings.Contains(req.Reason, "asked by policy: tool deploy (call d1): rule ask: deploys need a person") {
			t.Fatalf("approval request %+v", req)
		}
		if info, err := st.Info(ctx, out.ID()); err != nil || info.Status != store.StatusPaused {
			t.Fatalf("stored %+v, %v", info, err)
		}
		loaded, err := st.Load(ctx, out.ID())
		if err != nil {
			t.Fatal(err)
		}
		final, err := a.Resume(ctx, loaded, Verdict{Approve: approve, By: "ann", Reason: "ok"})
		if err != nil {
			t.Fatal(err)
		}
		res := resultsOf(final)
		if wipes.Load() != 0 || res["w1"].Error == nil || res["w1"].Error.Kind != session.ToolErrPolicy {
			t.Fatalf("the denied call: ran %d, %+v", wipes.Load(), res["w1"])
		}
		if approve {
			if deploys.Load() != 1 || res["d1"].Error != nil || len(res["d1"].Content) != 10 ||
				len(res["d1"].Notes) != 1 || res["d1"].Notes[0].Text != "10 of 100 bytes shown; max_output_bytes 10 set by tool deploy (call d1): rule ask: deploys need a person" {
				t.Fatalf("approved: ran %d, %+v", deploys.Load(), res["d1"])
			}
		} else if deploys.Load() != 0 || res["d1"].Error == nil || res["d1"].Error.Kind != session.ToolErrRejected {
			t.Fatalf("rejected: ran %d, %+v", deploys.Load(), res["d1"])
		}
		if last := final.Chunk(final.Len() - 1); last.Assistant == nil || last.Assistant.Text != "finished" {
			t.Fatalf("the loop did not go on: %+v", last)
		}
		st.Close()
	}
}

// A call to a tool that is not idempotent and whose risk is high waits
// for approval under any policy, unless a rule says otherwise.
func TestPolicyHighRiskNeedsApproval(t *testing.T) {
	cases := []struct {
		name      string
		decider   policy.Decider
		idem      bool
		wantPause bool
	}{
		{"no rules", rules(t), false, true},
		{"idempotent", rules(t), true, false},
		{"a rule allows it", rules(t, `{"name": "trusted", "when": "action.tool == 'launch'", "effect": "allow"}`), false, false},
		{"no decider", nil, false, false},
	}
	for _, c := range cases {
		var n atomic.Int32
		opts := []tool.Option[struct{}]{tool.WithRisk[struct{}](tool.RiskHigh)}
		if c.idem {
			opts = append(opts, tool.Idempotent[struct{}]())
		}
		m := scripted.New(model.Response{ToolCalls: []session.ToolCall{call("l1", "launch", `{}`)}}, model.Response{Text: "done"})
		a, _ := New(Config{Name: "r", Model: m, Tools: []tool.Tool{counted("launch", &n, opts...)}, Decider: c.decider})
		out, err := a.Forward(context.Background(), session.FromUser("go"))
		if c.wantPause {
			if !errors.Is(err, ErrPaused) || n.Load() != 0 || !decided(out, "approve", "tool launch (call l1)", policy.RuleBuiltin) {
				t.Fatalf("%s: err %v, ran %d, %v", c.name, err, n.Load(), policyDecisions(out))
			}
			continue
		}
		if err != nil || n.Load() != 1 {
			t.Fatalf("%s: err %v, ran %d", c.name, err, n.Load())
		}
	}
}

// A call that runs a command is decided as a tool call and as exec (its
// command line); one that reaches a host, as egress (its host), each
// decision recorded; the strictest wins.
func TestPolicyExecAndEgress(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	m := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{
			call("e1", "run_command", `{"shell":"echo hi"}`),
			call("e2", "run_command", `{"shell":"rm -rf src"}`),
			call("f1", "fetch", `{"url":"https://api.example.com/v1"}`),
			call("f2", "fetch", `{"url":"https://evil.example.org/x"}`),
			call("p1", "ping", `{}`),
		}},
		model.Response{Text: "done"})
	a, _ := New(Config{Name: "x", Model: m, Tools: append(builtin.Default(), fetchTool(), pingTool()), Decider: rules(t,
		`{"name": "commands", "when": "action.kind == 'tool' && action.tool == 'run_command'", "effect": "allow"}`,
		`{"name": "no-rm", "when": "action.kind == 'exec' && action.command.contains('rm -rf')", "effect": "deny", "reason": "no recursive deletes"}`,
		`{"name": "hosts", "when": "action.kind == 'egress' && !(action.host in ['api.example.com', 'status.example.net'])", "effect": "deny"}`)})
	out, err := a.Forward(context.Background(), session.FromUser("go").To("local", session.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	res := resultsOf(out)
	if res["e1"].Error != nil || !strings.Contains(res["e1"].Content, "hi") {
		t.Fatalf("echo: %+v", res["e1"])
	}
	if res["e2"].Error == nil || res["e2"].Error.Kind != session.ToolErrPolicy || !strings.Contains(res["e2"].Error.Message, "no recursive deletes") {
		t.Fatalf("rm: %+v", res["e2"])
	}
	if res["f1"].Error != nil || res["p1"].Error != nil || res["f2"].Error == nil || res["f2"].Error.Kind != session.ToolErrPolicy {
		t.Fatalf("fetch: %+v / %+v / %+v", res["f1"], res["f2"], res["p1"])
	}
	for _, w := range []struct{ choice, prefix, rule string }{
		{"allow", "tool run_command (call e1)", "commands"},
		{"allow", "exec run_command (call e1)", "default"},
		{"allow", "tool run_command (call e2)", "commands"},
		{"deny", "exec run_command (call e2)", "no-rm"},
		{"allow", "egress fetch (call f1) api.example.com", "default"},
		{"deny", "egress fetch (call f2) evil.example.org", "hosts"},
		{"allow", "egress ping (call p1) status.example.net", "default"},
	} {
		if !decided(out, w.choice, w.prefix, w.rule) {
			t.Errorf("no %s %s by %s in\n%s", w.choice, w.prefix, w.rule, strings.Join(policyDecisions(out), "\n"))
		}
	}
}

// Constraints are applied: a timeout, a bound on the output, a workspace
// root, read-only, allowed hosts.
func TestPolicyConstraintsApplied(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	slow := tool.MustFunc("slow", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Second):
			return "woke", nil
		}
	})
	long := tool.MustFunc("long", "Talks.", func(context.Context, struct{}) (string, error) { return strings.Repeat("a", 500), nil })
	m := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{
			call("s1", "slow", `{}`),
			call("l1", "long", `{}`),
			call("w1", "write_file", `{"path":"src/a.txt","content":"a"}`),
			call("w2", "write_file", `{"path":"docs/b.txt","content":"b"}`),
			call("r1", "read_file", `{"path":"src/a.txt"}`),
			call("c1", "run_command", `{"shell":"echo hi"}`),
			call("f1", "fetch", `{"url":"https://api.example.com/"}`),
			call("f2", "fetch", `{"url":"https://other.example.com/"}`),
		}},
		model.Response{Text: "done"})
	a, _ := New(Config{Name: "c", Model: m, Tools: append(builtin.Default(), slow, long, fetchTool()), Decider: rules(t,
		`{"name": "quick", "when": "action.tool == 'slow'", "effect": "constrain", "constraints": {"timeout": "50ms"}}`,
		`{"name": "short", "when": "action.tool == 'long'", "effect": "constrain", "constraints": {"max_output_bytes": 100}}`,
		`{"name": "src-only", "when": "action.tool in ['write_file', 'run_command']", "effect": "constrain", "constraints": {"workspace_root": "src"}}`,
		`{"name": "look", "when": "action.tool == 'read_file'", "effect": "constrain", "constraints": {"read_only": true, "workspace_root": "src"}}`,
		`{"name": "api", "when": "action.kind == 'tool' && action.tool == 'fetch'", "effect": "constrain", "constraints": {"allowed_hosts": ["api.example.com"]}}`)})
	out, err := a.Forward(context.Background(), session.FromUser("go").To("local", session.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	res := resultsOf(out)
	refused := func(id, says string) {
		t.Helper()
		if r := res[id]; r.Error == nil || r.Error.Kind != session.ToolErrPolicy || !strings.Contains(r.Error.Message, says) {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if r := res["s1"]; r.Error == nil || r.Error.Kind != session.ToolErrTimeout || !strings.Contains(r.Error.Message, "policy's timeout of 50ms") {
		t.Errorf("timeout: %+v", r.Error)
	}
	if r := res["l1"]; r.Error != nil || r.FullSize != 500 || r.Content != strings.Repeat("a", 100) ||
		len(r.Notes) != 1 || r.Notes[0].Kind != session.ToolNoteTruncated ||
		!strings.HasPrefix(r.Notes[0].Text, "100 of 500 bytes shown; max_output_bytes 100 set by tool long (call l1): rule short") {
		t.Errorf("output bound: %+v", r)
	}
	if r := res["w1"]; r.Error != nil {
		t.Errorf("a write under the root: %+v", r.Error)
	}
	refused("w2", "workspace root src: the call touches docs/b.txt, outside it")
	if r := res["r1"]; r.Error != nil || r.Content != "a" {
		t.Errorf("a read, read-only: %+v", r)
	}
	refused("c1", "the call runs a command, which may touch any path")
	if r := res["f1"]; r.Error != nil {
		t.Errorf("an allowed host: %+v", r.Error)
	}
	refused("f2", "allowed hosts api.example.com: the call reaches other.example.com")
	// The recorded constraints are those applied.
	for _, c := range out.All() {
		if isPolicyDecision(c) && strings.HasPrefix(c.Decision.Reason, "tool slow") {
			if ru := rulingOf(c.Decision); ru.effect != policy.Constrain || ru.limits.Timeout != 50*time.Millisecond {
				t.Errorf("recorded %+v", c.Decision)
			}
		}
	}
	// read-only refuses writes and commands.
	ro := ruling{effect: policy.Constrain, limits: policy.Constraints{ReadOnly: true}}
	if ro.refusal([]tool.Resource{tool.PathWrite("x")}, nil) == "" || ro.refusal([]tool.Resource{tool.SandboxExclusive()}, nil) == "" ||
		ro.refusal([]tool.Resource{tool.PathRead("x")}, nil) != "" {
		t.Error("read-only")
	}
}

// A denied memory read or write is skipped, as its decision chunk says; a
// memory operation cannot wait for approval (denied).
func TestPolicyMemory(t *testing.T) {
	ctx := context.Background()
	for _, effect := range []string{"allow", "deny", "approve"} {
		mem, err := local.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
		if err != nil {
			t.Fatal(err)
		}
		u, _ := memory.ParseURI("memory://project/rath/ci")
		if _, err := mem.Remember(ctx, nil, memory.Entry{URI: u, Content: "CI runs the tests with -race."}); err != nil {
			t.Fatal(err)
		}
		m := scripted.New(model.Response{Text: "use -race"})
		a, _ := New(Config{Name: "m", Model: m, Memory: mem, MemoryScopes: []string{"project/rath"}, CommitOnForward: true, Decider: rules(t,
			fmt.Sprintf(`{"name": "mem", "when": "action.kind.startsWith('memory.') && action.scope == 'project/rath'", "effect": %q}`, effect))})
		out, err := a.Forward(ctx, session.FromUser("how does CI run the tests?"))
		if err != nil {
			t.Fatal(err)
		}
		ops := map[session.MemoryOp]int{}
		for _, c := range out.All() {
			if c.Memory != nil {
				ops[c.Memory.Op]++
			}
		}
		want := "allow"
		if effect != "allow" {
			want = "deny"
		}
		if !decided(out, want, "memory.read project/rath", "mem") || !decided(out, want, "memory.write project/rath", "mem") {
			t.Fatalf("%s: decisions %v", effect, policyDecisions(out))
		}
		_, gerr := mem.Get(ctx, memory.URI{Scope: memory.ScopeSession, ScopeID: string(out.ID()), Path: "transcript"})
		if effect == "allow" && (ops[session.MemoryRecall] != 1 || gerr != nil) || effect != "allow" && (ops[session.MemoryRecall] != 0 || gerr == nil) {
			t.Fatalf("%s: memory chunks %v, committed: %v", effect, ops, gerr)
		}
		if effect == "approve" && !strings.Contains(strings.Join(policyDecisions(out), "\n"), "cannot wait for one") {
			t.Fatalf("approve: %v", policyDecisions(out))
		}
		mem.Close()
	}
}

type failingDecider struct{}

func (failingDecider) Decide(context.Context, policy.Action) (policy.Decision, error) {
	return policy.Decision{}, errors.New("the policy service is down")
}

// The context's decider is used when the agent has none of its own; a
// decider that errors denies.
func TestPolicyFromContextAndFailingDecider(t *testing.T) {
	m := scripted.New(model.Response{Text: "hi"})
	a, _ := New(Config{Name: "c", Model: m})
	ctx := policy.WithDecider(context.Background(), failingDecider{})
	out, err := a.Forward(ctx, session.FromUser("go"))
	if !errors.Is(err, policy.ErrDenied) || !decided(out, "deny", "model scripted (step 1)", policy.RuleError) ||
		!strings.Contains(err.Error(), "the policy service is down") {
		t.Fatalf("err = %v, decisions %v", err, policyDecisions(out))
	}
	// The agent's own decider comes first.
	m = scripted.New(model.Response{Text: "hi"})
	a, _ = New(Config{Name: "c", Model: m, Decider: rules(t)})
	out, err = a.Forward(ctx, session.FromUser("go"))
	if err != nil || !decided(out, "allow", "model scripted (step 1)", policy.RuleDefault) {
		t.Fatalf("err = %v, decisions %v", err, policyDecisions(out))
	}
	// The run's scope is among the facts.
	m = scripted.New(model.Response{Text: "hi"})
	a, _ = New(Config{Name: "c", Model: m, Decider: rules(t,
		`{"name": "acme", "when": "action.tenant == 'acme' && action.project == 'web' && action.agent == 'c'", "effect": "deny"}`)})
	_, err = a.Forward(runctx.WithScope(context.Background(), store.Scope{Tenant: "acme", Project: "web"}), session.FromUser("go"))
	if !errors.Is(err, policy.ErrDenied) {
		t.Fatalf("scope: %v", err)
	}
}

// Rulings read back from a session are those recorded; a recorded
// decision that does not read denies.
func TestRecordedRulings(t *testing.T) {
	c := call("x1", "fetch", `{"url":"https://a.example.com"}`)
	s := session.FromUser("go").Append(session.Assistant("", c),
		session.Of(decisionChunk(ruling{effect: policy.Constrain, limits: policy.Constraints{Timeout: time.Second}, why: "tool fetch (call x1): rule a: r"})),
		session.Of(decisionChunk(ruling{effect: policy.Approve, limits: policy.Constraints{MaxOutputBytes: 5}, why: "egress fetch (call x1) a.example.com: rule b: r"})),
		session.Of(decisionChunk(ruling{effect: policy.Deny, why: "tool other (call x2): rule c: r"})))
	got := recordedRulings(s, []session.ToolCall{c})
	ru, ok := got["x1"]
	if !ok || len(got) != 1 || ru.effect != policy.Approve || ru.limits.Timeout != time.Second || ru.limits.MaxOutputBytes != 5 ||
		!strings.HasPrefix(ru.why, "egress fetch") {
		t.Fatalf("rulings %+v", got)
	}
	bad := rulingOf(&session.Decision{Selector: PolicySelector, Choice: "constrain", Reason: "r",
		Candidates: []session.Candidate{{Name: "constrain", Description: `{"timeout": "never"}`}}})
	if bad.effect != policy.Deny {
		t.Fatalf("unreadable constraints: %+v", bad)
	}
}

// A command a call runs can be sent to approval by itself (exec), and a
// host it reaches (egress): the run pauses as for the call.
func TestPolicyExecAndEgressApproval(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	for _, c := range []struct {
		call session.ToolCall
		rule string
	}{
		{call("e1", "run_command", `{"shell":"git push"}`), `{"name": "push", "when": "action.kind == 'exec' && action.command.startsWith('git push')", "effect": "approve"}`},
		{call("f1", "fetch", `{"url":"https://pay.example.com/"}`), `{"name": "pay", "when": "action.kind == 'egress' && action.host == 'pay.example.com'", "effect": "approve"}`},
	} {
		m := scripted.New(model.Response{ToolCalls: []session.ToolCall{c.call}}, model.Response{Text: "done"})
		a, _ := New(Config{Name: "x", Model: m, Tools: append(builtin.Default(), fetchTool()), Decider: rules(t,
			`{"name": "commands", "when": "action.kind == 'tool' && action.tool == 'run_command'", "effect": "allow"}`, c.rule)})
		out, err := a.Forward(context.Background(), session.FromUser("go").To("local", session.Spec{}))
		if !errors.Is(err, ErrPaused) {
			t.Fatalf("%s: err = %v", c.call.Name, err)
		}
		asked := false
		for _, ch := range out.All() {
			if ch.Approval != nil && ch.Approval.CallID == c.call.ID && strings.Contains(ch.Approval.Reason, "asked by policy") {
				asked = true
			}
		}
		if !asked || len(resultsOf(out)) != 0 {
			t.Fatalf("%s: not paused for approval: %v", c.call.Name, policyDecisions(out))
		}
	}
}
