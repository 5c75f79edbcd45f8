package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func edgeSet(g *Graph) map[Edge]bool {
	out := map[Edge]bool{}
	for _, e := range g.Edges {
		out[e] = true
	}
	return out
}

func nodeIDs(g *Graph) []session.ID {
	var out []session.ID
	for _, n := range g.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func TestLoadGraphForkMerge(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	l := buildLineage(t, st)

	g, err := LoadGraph(ctx, st, l.root.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := []session.ID{l.root.ID(), l.a.ID(), l.b.ID(), l.m.ID(), l.child.ID()}
	if got := nodeIDs(g); !reflect.DeepEqual(got, want) {
		t.Errorf("nodes = %v, want %v (sorted by creation)", got, want)
	}
	wantEdges := map[Edge]bool{
		{From: l.root.ID(), To: l.a.ID(), Op: "fork"}:            true,
		{From: l.root.ID(), To: l.b.ID(), Op: "fork"}:            true,
		{From: l.a.ID(), To: l.m.ID(), Op: "merge"}:              true,
		{From: l.b.ID(), To: l.m.ID(), Op: "merge"}:              true,
		{From: l.m.ID(), To: l.child.ID(), Op: "agent:reviewer"}: true,
	}
	if got := edgeSet(g); !reflect.DeepEqual(got, wantEdges) || len(g.Edges) != len(wantEdges) {
		t.Errorf("edges = %v, want %v", g.Edges, wantEdges)
	}
	if g.Root != l.root.ID() {
		t.Errorf("root = %s", g.Root)
	}
	m, _ := g.node(l.m.ID())
	if m.Op != "merge" || m.Kind != string(session.LineageMerge) || m.Len != l.m.Len() || m.Head != l.m.Head() || m.Status != "open" {
		t.Errorf("merge node = %+v", m)
	}
}

// From one branch, the merge's other parent is in the graph although it is
// neither an ancestor nor a descendant.
func TestLoadGraphOtherMergeParents(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	l := buildLineage(t, st)
	if err := st.SetLabel(ctx, l.a.ID(), "team", "core"); err != nil {
		t.Fatal(err)
	}
	g, err := LoadGraph(ctx, st, l.a.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := []session.ID{l.root.ID(), l.a.ID(), l.b.ID(), l.m.ID(), l.child.ID()}
	if got := nodeIDs(g); !reflect.DeepEqual(got, want) {
		t.Errorf("nodes = %v, want %v", got, want)
	}
	if !edgeSet(g)[Edge{From: l.b.ID(), To: l.m.ID(), Op: "merge"}] || !edgeSet(g)[Edge{From: l.root.ID(), To: l.b.ID(), Op: "fork"}] {
		t.Errorf("edges miss the other branch: %v", g.Edges)
	}
	a, _ := g.node(l.a.ID())
	if a.Labels["team"] != "core" {
		t.Errorf("labels = %v", a.Labels)
	}

	// From the leaf: everything above it.
	g, err = LoadGraph(ctx, st, l.child.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 5 || len(g.Edges) != 5 {
		t.Errorf("from the leaf: %d nodes, %d edges, want 5 and 5", len(g.Nodes), len(g.Edges))
	}
}

func TestLoadGraphNotFound(t *testing.T) {
	_, err := LoadGraph(context.Background(), openStore(t), session.NewID())
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

func TestGraphFormats(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	l := buildLineage(t, st)
	g, err := LoadGraph(ctx, st, l.root.ID())
	if err != nil {
		t.Fatal(err)
	}

	var dot bytes.Buffer
	if err := g.Write(&dot, "dot"); err != nil {
		t.Fatal(err)
	}
	d := dot.String()
	if !strings.HasPrefix(d, "digraph lineage {\n") || !strings.HasSuffix(d, "}\n") || strings.Count(d, "{") != strings.Count(d, "}") {
		t.Errorf("dot output is not one digraph:\n%s", d)
	}
	for _, n := range g.Nodes {
		if !strings.Contains(d, `"`+string(n.ID)+`" [label="`+shortID(n.ID)+`\n`+n.Op+`\nlen `) {
			t.Errorf("dot misses node %s:\n%s", n.ID, d)
		}
	}
	for _, e := range g.Edges {
		if !strings.Contains(d, `"`+string(e.From)+`" -> "`+string(e.To)+`" [label="`+e.Op+`"];`) {
			t.Errorf("dot misses edge %v:\n%s", e, d)
		}
	}

	var mm bytes.Buffer
	if err := g.Write(&mm, "mermaid"); err != nil {
		t.Fatal(err)
	}
	m := mm.String()
	if !strings.HasPrefix(m, "flowchart TD\n") {
		t.Errorf("mermaid output does not start with flowchart TD:\n%s", m)
	}
	for _, n := range g.Nodes {
		if !strings.Contains(m, "  "+string(n.ID)+`["`) {
			t.Errorf("mermaid misses node %s:\n%s", n.ID, m)
		}
	}
	for _, e := range g.Edges {
		if !strings.Contains(m, "  "+string(e.From)+` -->|"`+e.Op+`"| `+string(e.To)+"\n") {
			t.Errorf("mermaid misses edge %v:\n%s", e, m)
		}
	}

	var js bytes.Buffer
	if err := g.Write(&js, "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), "\n  \"nodes\": [") {
		t.Errorf("json is not indented:\n%s", js.String())
	}
	var back Graph
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, g) {
		t.Errorf("json round trip:\n got %+v\nwant %+v", back, *g)
	}
}

func TestGraphUnknownFormat(t *testing.T) {
	g := &Graph{}
	err := g.Write(&bytes.Buffer{}, "png")
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `"png"`) {
		t.Fatalf("err = %v, want ErrFormat naming png", err)
	}
}

// Hostile ops and labels cannot break out of DOT or Mermaid strings.
func TestGraphEscaping(t *testing.T) {
	id1, id2 := session.NewID(), session.NewID()
	g := &Graph{Root: id1,
		Nodes: []Node{{ID: id1, Op: `x"];evil->x [label="`, Status: "open"}, {ID: id2, Op: "a\\l|b#c\n<i>", Status: "closed"}},
		Edges: []Edge{{From: id1, To: id2, Op: `"|x`}}}
	var dot bytes.Buffer
	if err := g.Write(&dot, "dot"); err != nil {
		t.Fatal(err)
	}
	if bare := unquoteDOT(dot.String()); strings.Contains(bare, "evil") || strings.Count(dot.String(), "\n") != 8 {
		t.Errorf("dot not escaped:\n%s", dot.String())
	}
	var mm bytes.Buffer
	if err := g.Write(&mm, "mermaid"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`x"]`, "<i>", `|x`} {
		if strings.Contains(mm.String(), bad) {
			t.Errorf("mermaid contains %q unescaped:\n%s", bad, mm.String())
		}
	}
}

// unquoteDOT replaces every double-quoted DOT string (with its backslash
// escapes) by Q, leaving what DOT would parse as syntax.
func unquoteDOT(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\':
			i++
		case in && c == '"':
			in = false
			b.WriteByte('Q')
		case in:
		case c == '"':
			in = true
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
