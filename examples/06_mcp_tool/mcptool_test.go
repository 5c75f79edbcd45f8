package mcptool_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	mcptool "github.com/openrath/rath/examples/06_mcp_tool"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
	"github.com/openrath/rath/tool/mcp"
)

func TestMCPTool(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	out, err := rt.Run(ctx, "mcp-tool")
	if err != nil {
		t.Fatal(err)
	}
	var results []*session.ToolResult
	for _, c := range out.All() {
		if c.ToolResult != nil {
			results = append(results, c.ToolResult)
		}
		if mc := c.ModelCall; mc != nil {
			offered := slices.Sorted(slices.Values(mc.Params.Tools))
			if !slices.Equal(offered, []string{"glossary_define", "glossary_list_terms"}) {
				t.Errorf("tools offered: %v", mc.Params.Tools)
			}
		}
	}
	if len(results) != 3 {
		t.Fatalf("%d tool results, want 3", len(results))
	}
	want := []struct{ tool, args, content string }{
		{"glossary_list_terms", `{}`, "chunk, detach, fork, lineage, merge, placement, replay, session"},
		{"glossary_define", `{"term":"fork"}`, mcptool.Glossary["fork"]},
		{"glossary_define", `{"term":"merge"}`, mcptool.Glossary["merge"]},
	}
	for i, w := range want {
		r := results[i]
		if r.Tool != w.tool || string(r.Args) != w.args || r.Content != w.content || r.Error != nil {
			t.Errorf("result %d: %+v, want %s %s → %q", i, r, w.tool, w.args, w.content)
		}
	}
	last, _ := out.Last()
	if last.Assistant == nil || !strings.Contains(last.Assistant.Text, mcptool.Glossary["merge"]) {
		t.Errorf("answer %+v", last)
	}

	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Errorf("replay head %s, want %s", again.Head(), out.Head())
	}
}

// TestGlossaryServer: the schema the SDK inferred reaches the client
// intact, read-only tools are idempotent, and the server's errors are
// execution errors with its message.
func TestGlossaryServer(t *testing.T) {
	ctx := context.Background()
	url, stop, err := mcptool.Serve()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	c, err := mcp.Connect(ctx, mcp.ServerConfig{Name: "glossary", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(t tool.Tool) bool { return t.Name() == "define" })
	if i < 0 {
		t.Fatalf("no define tool among %d", len(tools))
	}
	define := tools[i]
	var schema struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(define.Schema(), &schema); err != nil || !slices.Equal(schema.Required, []string{"term"}) || !define.Idempotent() {
		t.Errorf("define: schema %s, idempotent %v", define.Schema(), define.Idempotent())
	}
	got, err := define.Call(ctx, tool.Env{}, json.RawMessage(`{"term":"Detach"}`))
	if err != nil || got != mcptool.Glossary["detach"] {
		t.Errorf("define Detach: %q, %v", got, err)
	}
	_, err = define.Call(ctx, tool.Env{}, json.RawMessage(`{"term":"branch"}`))
	if tool.KindOf(err) != session.ToolErrExecution || !strings.Contains(err.Error(), `no entry for "branch"`) {
		t.Errorf("unknown term: %v", err)
	}
}
