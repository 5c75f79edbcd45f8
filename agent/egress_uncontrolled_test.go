package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox/bwrap"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool/builtin"
)

// A call allowed only some hosts does not run its command where the
// sandbox cannot hold it to them — the local backend, which controls no
// network — and says why; in a bwrap sandbox with the network off (no
// host at all) the same call runs.
func TestAllowedHostsRefusedWhereUncontrolled(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	pol := parsePolicy(t, `{"rules": [
		{"name": "pypi-only", "when": "action.tool == 'run_command'", "effect": "constrain", "constraints": {"allowed_hosts": ["pypi.org"]}}]}`)
	run := func(backend string) (*session.ToolResult, string) {
		t.Helper()
		dir := t.TempDir()
		m := scripted.New(
			model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c1", "run_command", `{"shell": "echo ran > ran.txt"}`)}},
			model.Response{Text: "done"})
		a, err := agent.New(agent.Config{Name: "net", Model: m, Tools: builtin.Default(), Decider: pol})
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.Forward(runctx.NewRun(context.Background()), session.FromUser("go").To(backend, session.Spec{Dir: dir}))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out.All() {
			if c.ToolResult != nil {
				return c.ToolResult, dir
			}
		}
		t.Fatal("no tool result")
		return nil, ""
	}

	res, dir := run("local")
	if res.Error == nil || res.Error.Kind != session.ToolErrPolicy ||
		!strings.Contains(res.Error.Message, "allowed hosts pypi.org: the local sandbox cannot keep a command from other hosts") {
		t.Fatalf("local: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); !os.IsNotExist(err) {
		t.Fatalf("the refused command ran: %v", err)
	}

	needBwrap(t)
	res, dir = run(bwrap.Name)
	if res.Error != nil {
		t.Fatalf("bwrap, network off: %+v", res.Error)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ran.txt")); err != nil || string(b) != "ran\n" {
		t.Fatalf("bwrap: %q, %v", b, err)
	}
}
