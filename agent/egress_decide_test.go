package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool/builtin"
)

// connDecider turns each effect of the run's policy on a connection into
// a verdict: allow and constrain (within its hosts) let it through, deny,
// approve and a failing policy refuse it; the call's allowed_hosts refuse
// first; without a policy everything is allowed under rule none.
func TestConnDecider(t *testing.T) {
	pol := rules(t,
		`{"name": "closed", "when": "action.kind == 'egress' && action.port == 25", "effect": "deny", "reason": "no mail"}`,
		`{"name": "ask", "when": "action.kind == 'egress' && action.host == 'ask.example'", "effect": "approve"}`,
		`{"name": "pkg", "when": "action.kind == 'egress' && action.host.endsWith('pypi.org')", "effect": "constrain", "constraints": {"allowed_hosts": ["pypi.org"]}}`,
		`{"name": "tool-only", "when": "action.kind == 'egress' && action.tool != 'run_command'", "effect": "deny"}`)
	c := session.NewToolCall("c1", "run_command", `{"shell":"curl x"}`)
	r := &run{pol: pol}
	decide := r.connDecider(policy.Action{Tenant: "t"}, builtin.RunCommand(), c, ruling{})
	for _, w := range []struct {
		host  string
		port  int
		allow bool
		rule  string
	}{
		{"example.com", 443, true, "default"},
		{"example.com", 25, false, "closed"},
		{"ask.example", 443, false, "ask"},
		{"pypi.org", 443, true, "pkg"},
		{"files.pypi.org", 443, false, "pkg"},
	} {
		v := decide(context.Background(), w.host, w.port)
		if v.Allow != w.allow || v.Rule != w.rule || v.Reason == "" {
			t.Errorf("%s:%d: %+v, want allow=%v by %s", w.host, w.port, v, w.allow, w.rule)
		}
	}
	if v := decide(context.Background(), "ask.example", 443); !strings.Contains(v.Reason, "cannot wait") {
		t.Errorf("approve: %q", v.Reason)
	}

	limited := r.connDecider(policy.Action{}, builtin.RunCommand(), c, ruling{effect: policy.Constrain, limits: policy.Constraints{AllowedHosts: []string{"*.example.com"}}, why: "tool run_command (call c1): rule net: ok"})
	if v := limited(context.Background(), "other.org", 443); v.Allow || v.Rule != RuleAllowedHosts || !strings.Contains(v.Reason, "allowed hosts *.example.com: not other.org") {
		t.Errorf("allowed_hosts: %+v", v)
	}
	if v := limited(context.Background(), "api.example.com", 443); !v.Allow {
		t.Errorf("an allowed host: %+v", v)
	}

	failing := (&run{pol: failingDecider{}}).connDecider(policy.Action{}, builtin.RunCommand(), c, ruling{})
	if v := failing(context.Background(), "example.com", 443); v.Allow || v.Rule != policy.RuleError {
		t.Errorf("a failing policy: %+v", v)
	}
	none := (&run{}).connDecider(policy.Action{}, builtin.RunCommand(), c, ruling{})
	if v := none(context.Background(), "example.com", 443); !v.Allow || v.Rule != sandbox.RuleNone {
		t.Errorf("no policy: %+v", v)
	}
}

// A tool's own Egress holds beside the call's: both must allow.
func TestEgressSandboxComposes(t *testing.T) {
	var got sandbox.Command
	inner := &recordingSandbox{exec: func(c sandbox.Command) { got = c }}
	log := new(connLog)
	sb := &egressSandbox{Sandbox: inner, decide: func(context.Context, string, int) sandbox.Verdict {
		return sandbox.Verdict{Allow: true, Rule: "call"}
	}, log: log}
	own := func(_ context.Context, host string, _ int) sandbox.Verdict {
		return sandbox.Verdict{Allow: host == "mine.example", Rule: "tool"}
	}
	if _, err := sb.Exec(context.Background(), sandbox.Command{Args: []string{"true"}, Egress: own}); err != nil {
		t.Fatal(err)
	}
	if v := got.Egress(context.Background(), "other.example", 1); v.Allow || v.Rule != "tool" {
		t.Errorf("the tool's refusal: %+v", v)
	}
	if v := got.Egress(context.Background(), "mine.example", 1); !v.Allow {
		t.Errorf("both allow: %+v", v)
	}
	cs, note := log.evidence()
	if len(cs) != 1 || cs[0].Host != "recorded.example" || note == nil || !strings.Contains(note.Text, "3 more connections") {
		t.Errorf("evidence %+v %+v", cs, note)
	}
}

// recordingSandbox is a sandbox whose Exec hands the command to exec and
// reports one recorded connection and three dropped.
type recordingSandbox struct {
	sandbox.Sandbox
	exec func(sandbox.Command)
}

func (s *recordingSandbox) Exec(_ context.Context, c sandbox.Command) (sandbox.Result, error) {
	s.exec(c)
	return sandbox.Result{Egress: []sandbox.Connection{{Host: "recorded.example", Port: 443, Allowed: true}}, EgressDropped: 3}, nil
}
