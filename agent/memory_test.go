package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/local"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

func TestMemoryRecalledOnceAndCommitted(t *testing.T) {
	ctx := context.Background()
	mem, err := local.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	u, _ := memory.ParseURI("memory://project/rath/ci")
	if _, err := mem.Remember(ctx, nil, memory.Entry{URI: u, Content: "CI runs the tests with -race on Debian."}); err != nil {
		t.Fatal(err)
	}
	other, _ := memory.ParseURI("memory://project/secret/ci")
	mem.Remember(ctx, nil, memory.Entry{URI: other, Content: "tests CI elsewhere"})
	var views [][]session.Message
	m := scripted.Func(func(_ context.Context, r *model.Request) (model.Response, error) {
		views = append(views, r.Messages)
		if len(views) == 1 {
			return model.Response{ToolCalls: []session.ToolCall{call("n", "noop", `{}`)}}, nil
		}
		return model.Response{Text: "use -race"}, nil
	})
	a, err := New(Config{Name: "m", Model: m, Tools: []tool.Tool{noopTool()}, Memory: mem, MemoryScopes: []string{"project/rath"}, CommitOnForward: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Forward(ctx, session.FromUser("how does CI run the tests?"))
	if err != nil {
		t.Fatal(err)
	}
	recalls := 0
	for _, c := range out.All() {
		if c.Memory != nil && c.Memory.Op == session.MemoryRecall {
			recalls++
			if len(c.Memory.Hits) != 1 || c.Memory.Hits[0].URI != u.String() {
				t.Fatalf("hits = %+v", c.Memory.Hits)
			}
		}
	}
	if recalls != 1 {
		t.Fatalf("%d recall chunks, want 1", recalls)
	}
	for i, v := range views {
		n := 0
		for _, msg := range v {
			if strings.Contains(msg.Content, "CI runs the tests with -race") {
				n++
				if msg.Role != session.RoleUser || msg.Trust != session.Untrusted || msg.Source != session.KindMemory {
					t.Fatalf("the memory reached the model as %s (%s, from a %s chunk), want an untrusted user message", msg.Role, msg.Trust, msg.Source)
				}
			}
			if strings.Contains(msg.Content, "elsewhere") {
				t.Fatalf("a scope the agent was not given was recalled")
			}
		}
		if n != 1 {
			t.Fatalf("view %d holds the memory %d times", i, n)
		}
	}
	if _, err := mem.Get(ctx, memory.URI{Scope: memory.ScopeSession, ScopeID: string(out.ID()), Path: "transcript"}); err != nil {
		t.Fatalf("the run was not committed to memory: %v", err)
	}
	if _, err := New(Config{Name: "x", Model: m, Memory: mem}); err == nil {
		t.Fatal("Memory without scopes was accepted")
	}
}
