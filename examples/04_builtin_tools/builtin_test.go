package builtintools_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	builtintools "github.com/openrath/rath/examples/04_builtin_tools"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func TestBuiltinTools(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home) // where the sandbox's workspace goes
	ctx := context.Background()
	if b := builtintools.Backend(ctx); b != "bwrap" {
		for _, n := range strings.Split(os.Getenv("RATH_REQUIRE"), ",") {
			if strings.TrimSpace(n) == "bwrap" {
				t.Fatal("RATH_REQUIRE names bwrap, but bwrap cannot run here")
			}
		}
		t.Log("bwrap cannot run here: the example runs on the local backend")
	}
	rt, err := rath.Open(ctx, rath.Config{Home: home, Policies: "../policies"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	out, err := rt.Run(ctx, "builtin-tools")
	if err != nil {
		t.Fatal(err)
	}
	pl := out.Placement()
	if pl.Backend != builtintools.Backend(ctx) || !sandbox.ValidID(pl.SandboxID) {
		t.Fatalf("placement %+v", pl)
	}
	var results []*session.ToolResult
	for _, c := range out.All() {
		if r := c.ToolResult; r != nil {
			results = append(results, r)
			if r.Error != nil || r.SandboxID != pl.SandboxID {
				t.Errorf("%s (%s): error %v, sandbox %s (want %s)", r.Tool, r.CallID, r.Error, r.SandboxID, pl.SandboxID)
			}
		}
	}
	var tools []string
	for _, r := range results {
		tools = append(tools, r.Tool)
	}
	want := []string{"list_files", "write_file", "write_file", "run_command", "edit_file", "run_command", "grep", "read_file"}
	if !slices.Equal(tools, want) {
		t.Fatalf("tool calls %v, want %v", tools, want)
	}
	effect := func(r *session.ToolResult) session.FileEffect {
		t.Helper()
		if len(r.Effects) != 1 {
			t.Fatalf("%s (%s) effects: %+v", r.Tool, r.CallID, r.Effects)
		}
		return r.Effects[0]
	}
	if r := results[0]; r.Content != "" {
		t.Errorf("list_files of the new workspace: %q", r.Content)
	}
	if e := effect(results[1]); e.Path != "greet.sh" || e.Op != session.EffectAdded || e.Before != "" ||
		!strings.Contains(e.Diff, `+echo "Hello, $1!"`) {
		t.Errorf("write_file greet.sh effect %+v", e)
	}
	if e := effect(results[2]); e.Path != "README.md" || e.Op != session.EffectAdded {
		t.Errorf("write_file README.md effect %+v", e)
	}
	if r := results[3]; !strings.Contains(r.Content, "Hello, Ada!\nHello, !\n") || len(r.Effects) != 0 {
		t.Errorf("first test run: %q, effects %+v", r.Content, r.Effects)
	}
	fix := effect(results[4])
	if fix.Path != "greet.sh" || fix.Op != session.EffectModified || fix.Before == fix.After ||
		!strings.Contains(fix.Diff, `-echo "Hello, $1!"`) || !strings.Contains(fix.Diff, `+echo "Hello, ${1:-world}!"`) {
		t.Errorf("edit_file effect %+v", fix)
	}
	if r := results[5]; !strings.HasPrefix(r.Content, "exit code 0\n") || !strings.Contains(r.Content, "Hello, Ada!\nHello, world!\n") {
		t.Errorf("second test run: %q", r.Content)
	}
	if r := results[6]; !strings.Contains(r.Content, "README.md:6:") || !strings.Contains(r.Content, "greet.sh:2:") ||
		!strings.Contains(r.Content, `greet.sh:3:echo "Hello, ${1:-world}!"`) {
		t.Errorf("grep: %q", r.Content)
	}
	script := results[7].Content
	if !strings.Contains(script, `echo "Hello, ${1:-world}!"`) {
		t.Errorf("read_file: %q", script)
	}
	// The workspace on the host holds what the session says.
	ws := filepath.Join(sandbox.WorkspacesDir(), pl.SandboxID)
	if b, err := os.ReadFile(filepath.Join(ws, "greet.sh")); err != nil || string(b) != script {
		t.Errorf("greet.sh on disk: %q, %v", b, err)
	}
	last, _ := out.Last()
	if last.Assistant == nil || !strings.Contains(last.Assistant.Text, "Hello, world!") {
		t.Errorf("final answer %+v", last)
	}

	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Errorf("replay head %s, want %s", again.Head(), out.Head())
	}
}
