package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var kinds = []string{KindModel, KindTool, KindExec, KindEgress, KindMemoryRead, KindMemoryWrite}

func mustParse(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := Parse("test.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func decide(t testing.TB, d Decider, a Action) Decision {
	t.Helper()
	got, err := d.Decide(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Every kind of action, under a rule of each effect that matches it.
func TestEachKindAndEffect(t *testing.T) {
	for _, kind := range kinds {
		for _, e := range Effects {
			constraints := ""
			if e == Constrain || e == Approve {
				constraints = `, "constraints": {"timeout": "2s", "max_output_bytes": 10}`
			}
			p := mustParse(t, fmt.Sprintf(`{"rules": [
				{"name": "other", "when": "action.kind != '%s'", "effect": "deny"},
				{"name": "it", "when": "action.kind == '%s'", "effect": %q, "reason": "because"%s}],
				"default": "deny"}`, kind, kind, e, constraints))
			got := decide(t, p, Action{Kind: kind, Tool: "t", Model: "m", Host: "h", Command: "c", Scope: "s"})
			if got.Effect != e || got.Rule != "it" || got.Reason != "because" {
				t.Fatalf("%s under %s: %+v", kind, e, got)
			}
			if (constraints != "") != (got.Constraints.Timeout == 2*time.Second && got.Constraints.MaxOutputBytes == 10) {
				t.Fatalf("%s under %s: constraints %+v", kind, e, got.Constraints)
			}
		}
	}
}

func TestFactsSeenByRules(t *testing.T) {
	p := mustParse(t, `{"rules": [
		{"name": "rm", "when": "action.kind == 'exec' && action.command.contains('rm -rf')", "effect": "deny"},
		{"name": "etc", "when": "action.kind == 'tool' && has(action.args.path) && action.args.path.startsWith('/etc')", "effect": "deny"},
		{"name": "big", "when": "action.kind == 'tool' && has(action.args.n) && action.args.n > 3", "effect": "approve"},
		{"name": "host", "when": "action.kind == 'egress' && !action.host.endsWith('.example.com')", "effect": "deny"},
		{"name": "gpt", "when": "action.kind == 'model' && action.model.startsWith('gpt') && action.provider == 'openai'", "effect": "deny"},
		{"name": "user-mem", "when": "action.kind.startsWith('memory.') && action.scopes.exists(s, s.startsWith('user/'))", "effect": "deny"},
		{"name": "tenant", "when": "action.tenant == 'acme' && action.project == 'web' && action.agent == 'ops' && action.placement == 'docker'", "effect": "deny"},
		{"name": "risky", "when": "action.risk == 'medium' && !action.idempotent && action.tool == 'edit'", "effect": "deny"},
		{"name": "scope", "when": "action.scope == 'project/x'", "effect": "deny"}
	]}`)
	cases := []struct {
		a    Action
		rule string
	}{
		{Action{Kind: KindExec, Tool: "run_command", Command: "rm -rf /"}, "rm"},
		{Action{Kind: KindExec, Tool: "run_command", Command: "ls"}, RuleDefault},
		{Action{Kind: KindTool, Tool: "read", Args: map[string]any{"path": "/etc/passwd"}}, "etc"},
		{Action{Kind: KindTool, Tool: "read", Args: map[string]any{"path": "src/x"}}, RuleDefault},
		{Action{Kind: KindTool, Tool: "n", Args: map[string]any{"n": 4.0}}, "big"},
		{Action{Kind: KindTool, Tool: "n", Args: map[string]any{"n": 2}}, RuleDefault},
		{Action{Kind: KindEgress, Host: "EVIL.org"}, "host"},
		{Action{Kind: KindEgress, Host: "api.example.com"}, RuleDefault},
		{Action{Kind: KindModel, Model: "gpt-5", Provider: "openai"}, "gpt"},
		{Action{Kind: KindMemoryRead, Scopes: []string{"project/a", "user/b"}}, "user-mem"},
		{Action{Kind: KindMemoryWrite, Scope: "project/x"}, "scope"},
		{Action{Kind: KindTool, Tool: "x", Tenant: "acme", Project: "web", Agent: "ops", Placement: "docker"}, "tenant"},
		{Action{Kind: KindTool, Tool: "edit", Risk: "MEDIUM"}, "risky"},
	}
	for _, c := range cases {
		if got := decide(t, p, c.a); got.Rule != c.rule {
			t.Errorf("%+v: decided by %s (%s), want %s", c.a, got.Rule, got, c.rule)
		}
	}
}

// A rule whose condition fails to evaluate denies, naming the rule and
// the error; the rules after it are not consulted.
func TestRuleThatErrorsDenies(t *testing.T) {
	p := mustParse(t, `{"rules": [
		{"name": "typo", "when": "action.kind == 'tool' && action.args.path.startsWith('/etc')", "effect": "allow"},
		{"name": "dyn", "when": "action.kind == 'exec' ? action.args.flag : false", "effect": "allow"},
		{"name": "costly", "when": "action.kind == 'egress' && [1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))", "effect": "allow"},
		{"name": "rest", "when": "true", "effect": "allow"}
	]}`)
	got := decide(t, p, Action{Kind: KindTool, Tool: "read", Args: map[string]any{"file": "x"}})
	if got.Effect != Deny || got.Rule != "typo" || !strings.Contains(got.Reason, "no such key: path") {
		t.Fatalf("missing key: %s", got)
	}
	got = decide(t, p, Action{Kind: KindExec, Args: map[string]any{"flag": "yes"}})
	if got.Effect != Deny || got.Rule != "dyn" || !strings.Contains(got.Reason, "not a bool") {
		t.Fatalf("non-bool: %s", got)
	}
	got = decide(t, p, Action{Kind: KindEgress, Host: "x"})
	if got.Effect != Deny || got.Rule != "costly" || !strings.Contains(got.Reason, "cost") {
		t.Fatalf("over the cost limit: %s", got)
	}
	if got := decide(t, p, Action{Kind: KindModel}); got.Effect != Allow || got.Rule != "rest" {
		t.Fatalf("a rule that holds: %s", got)
	}
	if got := decide(t, p, Action{Kind: "launch"}); got.Effect != Deny || got.Rule != RuleError {
		t.Fatalf("unknown kind: %s", got)
	}
}

// A call to a tool that is not idempotent and whose risk is high needs
// approval, unless a rule decides; other kinds and tools are allowed.
func TestHighRiskNeedsApprovalByDefault(t *testing.T) {
	risky := Action{Kind: KindTool, Tool: "run_command", Risk: RiskHigh}
	for _, d := range []Decider{(*Policy)(nil), mustParse(t, `{"rules": []}`)} {
		if got := decide(t, d, risky); got.Effect != Approve || got.Rule != RuleBuiltin {
			t.Fatalf("high risk: %s", got)
		}
		for _, a := range []Action{
			{Kind: KindTool, Tool: "run_command", Risk: RiskHigh, Idempotent: true},
			{Kind: KindTool, Tool: "edit", Risk: "medium"},
			{Kind: KindExec, Tool: "run_command", Risk: RiskHigh},
			{Kind: KindTool, Tool: "mystery"},
		} {
			want := RuleDefault
			if d == (*Policy)(nil) {
				want = RuleNone // no policy at all
			}
			if got := decide(t, d, a); got.Effect != Allow || got.Rule != want {
				t.Fatalf("%+v: %s", a, got)
			}
		}
	}
	p := mustParse(t, `{"rules": [{"name": "trusted", "when": "action.tool == 'run_command'", "effect": "allow"}]}`)
	if got := decide(t, p, risky); got.Effect != Allow || got.Rule != "trusted" {
		t.Fatalf("a rule that allows it: %s", got)
	}
	p = mustParse(t, `{"default": "deny"}`)
	if got := decide(t, p, risky); got.Effect != Approve {
		t.Fatalf("the built-in rule comes before the default: %s", got)
	}
	if got := decide(t, p, Action{Kind: KindModel}); got.Effect != Deny || got.Rule != RuleDefault {
		t.Fatalf("default deny: %s", got)
	}
}

// A file that does not decode or compile is an error naming the file and
// the rule at fault.
func TestParseErrorsNameFileAndRule(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{"rules": [{"name": "bad", "when": "action.tool ==", "effect": "deny"}]}`, `rule "bad": when`},
		{`{"rules": [{"name": "typo", "when": "action.tol == 'x'", "effect": "deny"}]}`, `rule "typo": when: ERROR`},
		{`{"rules": [{"name": "str", "when": "action.tool", "effect": "deny"}]}`, `rule "str": when: the condition is a string`},
		{`{"rules": [{"name": "e", "when": "true", "effect": "block"}]}`, `rule "e": effect "block"`},
		{`{"rules": [{"name": "c", "when": "true", "effect": "constrain"}]}`, `rule "c" constrains but gives no constraints`},
		{`{"rules": [{"name": "a", "when": "true", "effect": "allow", "constraints": {"read_only": true}}]}`, `rule "a": constraints go with`},
		{`{"rules": [{"name": "t", "when": "true", "effect": "constrain", "constraints": {"timeout": "soon"}}]}`, `timeout`},
		{`{"rules": [{"name": "r", "when": "true", "effect": "constrain", "constraints": {"workspace_root": "../up"}}]}`, `workspace_root`},
		{`{"rules": [{"name": "h", "when": "true", "effect": "constrain", "constraints": {"allowed_hosts": ["https://x"]}}]}`, `allowed_hosts`},
		{`{"rules": [{"name": "u", "when": "true", "effect": "constrain", "constraints": {"ram": 1}}]}`, `unknown field "ram"`},
		{`{"rules": [{"name": "d", "when": "true", "effect": "deny"}, {"name": "d", "when": "false", "effect": "deny"}]}`, `two rules are named "d"`},
		{`{"rules": [{"when": "true", "effect": "deny"}]}`, `rule 1 has no name`},
		{`{"rules": [{"name": "w", "effect": "deny"}]}`, `rule "w" has no condition`},
		{`{"rules": [], "default": "constrain"}`, `default "constrain"`},
		{`{"rules": [], "extra": 1}`, `unknown field "extra"`},
		{`{"rules": []} {}`, `data after`},
		{`[`, `unexpected EOF`},
	}
	for _, c := range cases {
		_, err := Parse("projects/web.json", []byte(c.src))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "projects/web.json") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalid naming the file and %q", c.src, err, c.want)
		}
	}
}

func TestConstraints(t *testing.T) {
	var c Constraints
	src := `{"timeout":"1m30s","max_output_bytes":100,"allowed_hosts":["api.example.com","*.example.org"],"read_only":true,"workspace_root":"src/app"}`
	if err := c.UnmarshalJSON([]byte(src)); err != nil {
		t.Fatal(err)
	}
	b, err := c.MarshalJSON()
	if err != nil || string(b) != src {
		t.Fatalf("round trip: %s, %v", b, err)
	}
	for host, ok := range map[string]bool{"api.example.com": true, "API.example.com": true, "a.example.org": true,
		"example.org": false, "example.com": false, "evil.com": false} {
		if c.AllowsHost(host) != ok {
			t.Errorf("AllowsHost(%s) = %v", host, !ok)
		}
	}
	for p, ok := range map[string]bool{"src/app": true, "src/app/x.go": true, "src/apple": false, "src": false, "": false} {
		if c.Within(p) != ok {
			t.Errorf("Within(%q) = %v", p, !ok)
		}
	}
	m, err := c.Merge(Constraints{Timeout: time.Second, MaxOutputBytes: 1000, AllowedHosts: []string{"*.example.com", "b.example.org"},
		WorkspaceRoot: "src"})
	if err != nil || m.Timeout != time.Second || m.MaxOutputBytes != 100 || !m.ReadOnly || m.WorkspaceRoot != "src/app" ||
		strings.Join(m.AllowedHosts, " ") != "api.example.com b.example.org" {
		t.Fatalf("merge: %+v, %v", m, err)
	}
	if _, err := c.Merge(Constraints{WorkspaceRoot: "docs"}); err == nil {
		t.Fatal("disjoint roots merged")
	}
	if _, err := c.Merge(Constraints{AllowedHosts: []string{"evil.com"}}); err == nil {
		t.Fatal("disjoint hosts merged")
	}
	if s := c.String(); s != "timeout 1m30s, max_output_bytes 100, allowed_hosts api.example.com *.example.org, read_only, workspace_root src/app" {
		t.Fatalf("String: %s", s)
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if From(ctx) != nil {
		t.Fatal("a bare context has a decider")
	}
	p := mustParse(t, `{}`)
	if From(WithDecider(ctx, p)) != p || From(WithDecider(WithDecider(ctx, p), nil)) != nil {
		t.Fatal("WithDecider/From")
	}
}
