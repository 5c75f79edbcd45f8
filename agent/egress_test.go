package agent_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/bwrap"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool/builtin"
)

// needBwrap skips the test when bwrap cannot run here, unless
// RATH_REQUIRE names bwrap (the test script's CI skips nothing).
func needBwrap(t *testing.T) {
	t.Helper()
	err := bwrap.Backend{}.Available(context.Background())
	if err == nil {
		return
	}
	for _, name := range strings.Split(os.Getenv("RATH_REQUIRE"), ",") {
		if strings.TrimSpace(name) == bwrap.Name {
			t.Fatalf("RATH_REQUIRE names bwrap, but: %v", err)
		}
	}
	t.Skipf("skipping: %v", err)
}

// serve is an HTTP server on the host's loopback answering "hello from
// name", and its port.
func serve(t *testing.T, name string) int {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+name)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// viaProxy is a curl command line that goes through the sandbox's egress
// proxy even to a loopback address (which NO_PROXY otherwise keeps in the
// sandbox): the proxy dials it on the host.
func viaProxy(url string) string {
	return "curl -sS --max-time 30 --noproxy '' -w ' %{http_code}\\n' " + url
}

// The run's policy decides the connections a run_command's curl opens in
// a bwrap sandbox with the network on: the call's allowed_hosts refuse
// localhost, a rule on the egress action's port refuses another, the
// allowed one answers; each decision is in the call's result, which a
// replay serves as recorded.
func TestEgressDecidedByPolicy(t *testing.T) {
	needBwrap(t)
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	okPort, noPort, closedPort := serve(t, "ok"), serve(t, "no"), serve(t, "closed")
	script := fmt.Sprintf("%s; %s; %s", viaProxy(fmt.Sprintf("http://127.0.0.1:%d/", okPort)),
		viaProxy(fmt.Sprintf("http://localhost:%d/", noPort)), viaProxy(fmt.Sprintf("http://127.0.0.1:%d/", closedPort)))
	pol := parsePolicy(t, fmt.Sprintf(`{"rules": [
		{"name": "closed-port", "when": "action.kind == 'egress' && action.port == %d", "effect": "deny", "reason": "that port is closed"},
		{"name": "loopback-only", "when": "action.tool == 'run_command'", "effect": "constrain", "constraints": {"allowed_hosts": ["127.0.0.1"]}}]}`, closedPort))
	build := func(d policy.Decider, m model.Model) *agent.Agent {
		a, err := agent.New(agent.Config{Name: "net", Model: m, Tools: builtin.Default(), Decider: d})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	m := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c1", "run_command", fmt.Sprintf(`{"shell": %q}`, script))}},
		model.Response{Text: "done"})
	out, err := build(pol, m).Forward(runctx.NewRun(ctx), session.FromUser("go").To(bwrap.Name, session.Spec{Network: true}))
	if err != nil {
		t.Fatal(err)
	}
	var res *session.ToolResult
	for _, c := range out.All() {
		if c.ToolResult != nil {
			res = c.ToolResult
		}
	}
	if res == nil || res.Error != nil {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.Content, "hello from ok 200") || strings.Contains(res.Content, "hello from no") ||
		strings.Contains(res.Content, "hello from closed") || strings.Count(res.Content, " 403") != 2 {
		t.Errorf("output:\n%s", res.Content)
	}
	want := []struct {
		host    string
		port    int
		allowed bool
		rule    string
	}{{"127.0.0.1", okPort, true, "loopback-only"}, {"localhost", noPort, false, agent.RuleAllowedHosts}, {"127.0.0.1", closedPort, false, "closed-port"}}
	if len(res.Egress) != len(want) {
		t.Fatalf("recorded %+v", res.Egress)
	}
	for i, w := range want {
		if g := res.Egress[i]; g.Host != w.host || g.Port != w.port || g.Allowed != w.allowed || g.Rule != w.rule || g.Time.IsZero() {
			t.Errorf("connection %d: %+v, want %+v", i, g, w)
		}
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}
	// The evidence survives the session's encoding.
	var buf strings.Builder
	if err := session.Encode(&buf, out); err != nil {
		t.Fatal(err)
	}
	back, err := session.Decode(strings.NewReader(buf.String()))
	if err != nil || back.Head() != out.Head() {
		t.Fatalf("decoded: %v", err)
	}
	// A replay serves the result: nothing runs, nothing is decided again.
	for _, d := range []policy.Decider{pol, nil} {
		again, err := replay.Run(ctx, build(d, scripted.New()), out)
		if err != nil || again.Head() != out.Head() {
			t.Fatalf("replay under %v: %v", d, err)
		}
	}
}

// Without a policy, a command's connections are allowed and recorded.
func TestEgressRecordedWithoutPolicy(t *testing.T) {
	needBwrap(t)
	t.Setenv("RATH_HOME", t.TempDir())
	port := serve(t, "host")
	m := scripted.New(
		model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c1", "run_command",
			fmt.Sprintf(`{"shell": %q}`, viaProxy(fmt.Sprintf("http://127.0.0.1:%d/", port))))}},
		model.Response{Text: "done"})
	a, err := agent.New(agent.Config{Name: "net", Model: m, Tools: builtin.Default()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Forward(runctx.NewRun(context.Background()), session.FromUser("go").To(bwrap.Name, session.Spec{Network: true}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range out.All() {
		if r := c.ToolResult; r != nil {
			if !strings.Contains(r.Content, "hello from host 200") || len(r.Egress) != 1 || !r.Egress[0].Allowed || r.Egress[0].Rule != sandbox.RuleNone {
				t.Errorf("result %+v", r)
			}
		}
	}
}
