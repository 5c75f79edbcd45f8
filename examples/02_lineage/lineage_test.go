package lineage_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	lineage "github.com/openrath/rath/examples/02_lineage"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

func TestLineage(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	out, err := rt.Run(ctx, "lineage")
	if err != nil {
		t.Fatal(err)
	}
	lin := func(id session.ID) session.Lineage {
		t.Helper()
		info, err := rt.Store.Info(ctx, id)
		if err != nil {
			t.Fatalf("session %s: %v", id, err)
		}
		return info.Lineage
	}
	info, err := rt.Store.Info(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	input := session.ID(info.Labels[runctx.Label])

	// The output: the merged proposals merged with the review.
	top := out.Lineage()
	if top.Kind != session.LineageMerge || len(top.Parents) != 2 {
		t.Fatalf("output lineage %+v", top)
	}
	merged, reviewed := lin(top.Parents[0]), lin(top.Parents[1])
	if merged.Kind != session.LineageMerge || len(merged.Parents) != 2 {
		t.Fatalf("merged lineage %+v", merged)
	}
	for i, o := range lineage.Options {
		branch := lin(merged.Parents[i])
		if want := o.Name + "/agent:proposer#1"; branch.Op != want || len(branch.Parents) != 1 {
			t.Fatalf("branch %d lineage %+v, want op %s", i, branch, want)
		}
		fork := lin(branch.Parents[0])
		if fork.Kind != session.LineageFork || !slices.Equal(fork.Parents, []session.ID{input}) {
			t.Errorf("fork %d lineage %+v, want a fork of the input %s", i, fork, input)
		}
	}
	if reviewed.Op != "review/agent:reviewer#1" || len(reviewed.Parents) != 1 {
		t.Fatalf("review lineage %+v", reviewed)
	}
	detached := lin(reviewed.Parents[0])
	if detached.Kind != session.LineageDetach || len(detached.Parents) != 0 {
		t.Errorf("the reviewer's input is not a detached copy: %+v", detached)
	}

	// The merges' arithmetic: 1 shared chunk (the task); each branch added
	// its prompt, the proposer's instructions, a model call and an answer;
	// the review fast-forwarded 10 chunks with 3 of its own.
	if x := merged.Extras; x["common_prefix"] != "1" || x["ours"] != "4" || x["theirs"] != "4" {
		t.Errorf("branch merge extras %v", x)
	}
	if x := top.Extras; x["common_prefix"] != "10" || x["ours"] != "0" || x["theirs"] != "3" {
		t.Errorf("review merge extras %v", x)
	}
	var origins, notes int
	for i, c := range out.All() {
		if c.Origin != "" {
			origins++
			if i < 5 || i > 8 {
				t.Errorf("chunk %d was re-chained; only the second branch's (5..8) should be", i)
			}
		}
		if c.Note != nil {
			notes++
			if !strings.HasPrefix(c.Node, "lineage:note#") {
				t.Errorf("note by %q", c.Node)
			}
		}
	}
	if origins != 4 || notes != 2 {
		t.Errorf("%d re-chained chunks (want 4), %d notes (want 2)", origins, notes)
	}
	if last, _ := out.Last(); last.Note == nil || !strings.Contains(last.Note.Text, "3 new from the review") {
		t.Errorf("last chunk %+v", last)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}

	// The graph: input, 2 forks, 2 proposals, the merge, the detached copy,
	// its review, the output.
	g, err := export.LoadGraph(ctx, rt.Store, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 9 {
		t.Errorf("graph has %d nodes, want 9", len(g.Nodes))
	}
	ops := map[string]int{}
	for _, e := range g.Edges {
		ops[e.Op]++
	}
	want := map[string]int{"fork": 2, "in-process/agent:proposer#1": 1, "redis/agent:proposer#1": 1, "merge": 4, "review/agent:reviewer#1": 1}
	for op, n := range want {
		if ops[op] != n {
			t.Errorf("%d edges %q, want %d (all: %v)", ops[op], op, n, ops)
		}
	}
	if len(g.Edges) != 9 {
		t.Errorf("%d edges, want 9", len(g.Edges))
	}
	for _, format := range []string{export.FormatMermaid, export.FormatDOT} {
		var b strings.Builder
		if err := g.Write(&b, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "fork") || !strings.Contains(b.String(), "detach") {
			t.Errorf("%s graph names no fork or detach:\n%s", format, b.String())
		}
		t.Logf("%s:\n%s", format, b.String())
	}

	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Errorf("replay head %s, want %s", again.Head(), out.Head())
	}
}
