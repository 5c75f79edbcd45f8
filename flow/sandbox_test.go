package flow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/replay"
	"github.com/openrath/rath/sandbox"
	_ "github.com/openrath/rath/sandbox/local"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/builtin"
)

// TestParallelBranchesGetTheirOwnWorkspace: with a pool, each branch of a
// placed session writes in its own copy of the workspace; the input's
// workspace is untouched.
func TestParallelBranchesGetTheirOwnWorkspace(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	pool := sandbox.NewPool()
	defer pool.Close()
	replaying := false
	writer := func(name string) flow.Module {
		m := scripted.New(
			model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("w", "write_file", fmt.Sprintf(`{"path":"out.txt","content":%q}`, name))}},
			model.Response{Text: "written"})
		if replaying {
			m = scripted.New() // a replay must not call the model
		}
		a, err := agent.New(agent.Config{Name: name, Model: m, Tools: []tool.Tool{builtin.WriteFile()}, Sandboxes: pool})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "seed.txt"), []byte("seed"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := session.FromUser("write").To("local", session.Spec{Dir: ws})
	p := &flow.Par{Branches: []flow.Module{writer("left"), writer("right")}, Sandboxes: pool}
	out, err := flow.Run(context.Background(), nil, p, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); !os.IsNotExist(err) {
		t.Fatal("a branch wrote into the input's workspace")
	}
	ids := map[string]bool{}
	for _, c := range out.All() {
		if c.ToolResult != nil {
			ids[c.ToolResult.SandboxID] = true
			if c.ToolResult.Error != nil {
				t.Fatalf("tool error: %+v", c.ToolResult.Error)
			}
		}
	}
	if len(ids) != 2 {
		t.Fatalf("branches ran in %d sandboxes, want 2", len(ids))
	}
	// The run replays to the same chain: the branches' workspace forks
	// and the merge's placement are served from the record.
	replaying = true
	p2 := &flow.Par{Branches: []flow.Module{writer("left"), writer("right")}, Sandboxes: pool}
	again, err := replay.Run(context.Background(), p2, out)
	if err != nil || again.Head() != out.Head() {
		t.Fatalf("replay: %v", err)
	}
}
