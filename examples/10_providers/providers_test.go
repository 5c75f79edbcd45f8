package providers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"

	providers "github.com/openrath/rath/examples/10_providers"
)

func TestProviders(t *testing.T) {
	ctx := context.Background()
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	out, err := rt.Run(ctx, providers.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}

	// Both branches ran on their own model, from the same input.
	bs := providers.Branches(out)
	if len(bs) != 2 {
		t.Fatalf("branches %+v", bs)
	}
	fast, careful := bs[0], bs[1]
	if fast.Name != "fast" || fast.Model != "scripted:fast" || fast.Calls != 1 || fast.ToolCalls != 0 || !strings.HasPrefix(fast.Answer, "About 16 pods") {
		t.Fatalf("fast %+v", fast)
	}
	if careful.Name != "careful" || careful.Model != "scripted:careful" || careful.Calls != 2 || careful.ToolCalls != 1 || !strings.HasPrefix(careful.Answer, "17 pods") {
		t.Fatalf("careful %+v", careful)
	}
	// Usage and cost per branch; the merged session counts each once.
	if fast.Usage.CostUSD <= 0 || careful.Usage.CostUSD <= 10*fast.Usage.CostUSD || careful.Usage.Total() <= fast.Usage.Total() {
		t.Fatalf("usage fast %v, careful %v", fast.Usage, careful.Usage)
	}
	if sum := fast.Usage.Add(careful.Usage); sum.Total() != out.Usage().Total() || sum.CostUSD-out.Usage().CostUSD > 1e-12 || out.Usage().CostUSD-sum.CostUSD > 1e-12 {
		t.Fatalf("merged usage %v, branches %v", out.Usage(), sum)
	}
	// The careful branch's tool result is the exact arithmetic.
	for _, c := range out.All() {
		if c.ToolResult != nil && (c.ToolResult.Content != `{"exact":16.25,"pods":17}` || !strings.HasPrefix(c.Node, "race/careful/")) {
			t.Fatalf("tool result %+v at %s", c.ToolResult, c.Node)
		}
	}
	// The input is shared, once: the merge keeps the common prefix.
	users := 0
	for _, c := range out.All() {
		if c.User != nil {
			users++
		}
	}
	if users != 1 || out.Chunk(0).User == nil {
		t.Fatalf("%d user chunks in the merge", users)
	}
	// Each branch ran on its own fork: the store holds both agents'
	// sessions of the run, and neither has the other's chunks.
	info, err := rt.Store.Info(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	runs, err := rt.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: info.Labels[runctx.Label]}})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]*session.Session{}
	for _, r := range runs {
		if strings.HasPrefix(r.Lineage.Op, "race/") && strings.HasSuffix(r.Lineage.Op, "/agent:planner#1") {
			s, err := rt.Store.Load(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			ops[r.Lineage.Op] = s
		}
	}
	f, c := ops["race/fast/agent:planner#1"], ops["race/careful/agent:planner#1"]
	if len(ops) != 2 || f == nil || c == nil || f.Len() != 4 || c.Len() != 7 || f.Chunk(0).ID != c.Chunk(0).ID || f.Chunk(1).ID == c.Chunk(1).ID {
		t.Fatalf("branch sessions %v", ops)
	}

	// The comparison note.
	last, _ := out.Last()
	if last.Note == nil || last.Node != "compare/compare#1" {
		t.Fatalf("last chunk %+v", last)
	}
	for _, want := range []string{
		"- fast (scripted:fast): 1 model call, 0 tool calls",
		"- careful (scripted:careful): 2 model calls, 1 tool call",
		"$", "careful used", "x the tokens of fast and cost", "Answer: 17 pods",
	} {
		if !strings.Contains(last.Note.Text, want) {
			t.Fatalf("note lacks %q:\n%s", want, last.Note.Text)
		}
	}

	// Deterministic: the replay repeats the head without calling a model.
	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Fatalf("replay head %s, recorded %s", again.Head(), out.Head())
	}
}
