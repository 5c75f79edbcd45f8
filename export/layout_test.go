package export

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/openrath/rath/session"
)

// family makes a lineage-like DAG of n sessions: each new session forks a
// random earlier one, and every seventh merges two earlier ones.
func family(n int, seed uint64) *Graph {
	r := rand.New(rand.NewPCG(seed, 1))
	g := &Graph{Edges: []Edge{}}
	id := func(i int) session.ID { return session.ID(fmt.Sprintf("ses_%026d", i)) }
	for i := range n {
		g.Nodes = append(g.Nodes, Node{ID: id(i), Op: "fork", Status: "open", Len: i})
		switch {
		case i == 0:
		case i%7 == 0 && i > 2:
			a, b := r.IntN(i), r.IntN(i)
			g.Edges = append(g.Edges, Edge{From: id(a), To: id(i), Op: "merge"})
			if b != a {
				g.Edges = append(g.Edges, Edge{From: id(b), To: id(i), Op: "merge"})
			}
		default:
			g.Edges = append(g.Edges, Edge{From: id(r.IntN(i)), To: id(i), Op: "fork"})
		}
	}
	g.Root = id(0)
	return g
}

// checkLayout asserts the properties every drawing must have.
func checkLayout(t *testing.T, g *Graph, d *Drawing) {
	t.Helper()
	if len(d.Nodes) != len(g.Nodes) {
		t.Fatalf("%d nodes placed, want %d", len(d.Nodes), len(g.Nodes))
	}
	at := map[session.ID]Placed{}
	for i, p := range d.Nodes {
		if p.Node.ID != g.Nodes[i].ID {
			t.Fatalf("placed node %d is %s, want %s", i, p.Node.ID, g.Nodes[i].ID)
		}
		if _, dup := at[p.Node.ID]; dup {
			t.Fatalf("node %s placed twice", p.Node.ID)
		}
		at[p.Node.ID] = p
		if p.X-p.W/2 < 0 || p.X+p.W/2 > d.Width || p.Y-p.H/2 < 0 || p.Y+p.H/2 > d.Height {
			t.Errorf("node %s at (%.1f,%.1f) size %.1fx%.1f leaves the %.1fx%.1f drawing", p.Node.ID, p.X, p.Y, p.W, p.H, d.Width, d.Height)
		}
	}
	deepest := map[session.ID]int{}
	for _, e := range g.Edges {
		a, b := at[e.From], at[e.To]
		if a.Layer >= b.Layer || a.Y+a.H/2 >= b.Y-b.H/2 {
			t.Errorf("parent %s (layer %d, y %.1f) is not above child %s (layer %d, y %.1f)", e.From, a.Layer, a.Y, e.To, b.Layer, b.Y)
		}
		deepest[e.To] = max(deepest[e.To], a.Layer+1)
	}
	for _, p := range d.Nodes {
		if p.Layer != deepest[p.Node.ID] {
			t.Errorf("node %s in layer %d, want %d (one below its deepest parent)", p.Node.ID, p.Layer, deepest[p.Node.ID])
		}
	}
	for i, p := range d.Nodes {
		for _, q := range d.Nodes[i+1:] {
			if p.X-p.W/2 < q.X+q.W/2 && q.X-q.W/2 < p.X+p.W/2 && p.Y-p.H/2 < q.Y+q.H/2 && q.Y-q.H/2 < p.Y+p.H/2 {
				t.Errorf("nodes %s and %s overlap", p.Node.ID, q.Node.ID)
			}
		}
	}
	if len(d.Edges) != len(g.Edges) {
		t.Fatalf("%d edges routed, want %d", len(d.Edges), len(g.Edges))
	}
	for i, r := range d.Edges {
		e := g.Edges[i]
		if r.Edge != e {
			t.Fatalf("route %d is %v, want %v", i, r.Edge, e)
		}
		a, b := at[e.From], at[e.To]
		first, last := r.Points[0], r.Points[len(r.Points)-1]
		if first != (Point{a.X, a.Y + a.H/2}) || last != (Point{b.X, b.Y - b.H/2}) {
			t.Errorf("edge %s->%s runs from %v to %v, want from %s's bottom to %s's top", e.From, e.To, first, last, e.From, e.To)
		}
		if len(r.Points) != b.Layer-a.Layer+1 {
			t.Errorf("edge %s->%s has %d points across %d layers", e.From, e.To, len(r.Points), b.Layer-a.Layer)
		}
		for k := 1; k < len(r.Points); k++ {
			if r.Points[k].Y <= r.Points[k-1].Y {
				t.Errorf("edge %s->%s goes up at point %d", e.From, e.To, k)
			}
		}
	}
}

func TestLayoutFamilies(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 30, 150} {
		for seed := range uint64(4) {
			g := family(n, seed)
			t.Run(fmt.Sprintf("n%d-seed%d", n, seed), func(t *testing.T) {
				d := Layout(g)
				checkLayout(t, g, d)
				if again := Layout(g); !reflect.DeepEqual(d, again) {
					t.Error("two layouts of one graph differ")
				}
			})
		}
	}
}

func TestLayoutStoredLineage(t *testing.T) {
	st := openStore(t)
	l := buildLineage(t, st)
	g, err := LoadGraph(t.Context(), st, l.m.ID())
	if err != nil {
		t.Fatal(err)
	}
	d := Layout(g)
	checkLayout(t, g, d)
	layer := map[session.ID]int{}
	for _, p := range d.Nodes {
		layer[p.Node.ID] = p.Layer
	}
	want := map[session.ID]int{l.root.ID(): 0, l.a.ID(): 1, l.b.ID(): 1, l.m.ID(): 2, l.child.ID(): 3}
	if !reflect.DeepEqual(layer, want) {
		t.Errorf("layers %v, want %v", layer, want)
	}
}

// TestLayoutUncrosses checks that the sweeps untangle two parents whose
// children come in the opposite order: drawn in input order the two edges
// would cross.
func TestLayoutUncrosses(t *testing.T) {
	g := &Graph{
		Nodes: []Node{{ID: "ses_A"}, {ID: "ses_B"}, {ID: "ses_b1"}, {ID: "ses_a1"}},
		Edges: []Edge{{From: "ses_A", To: "ses_a1"}, {From: "ses_B", To: "ses_b1"}},
	}
	d := Layout(g)
	checkLayout(t, g, d)
	x := map[session.ID]float64{}
	for _, p := range d.Nodes {
		x[p.Node.ID] = p.X
	}
	if (x["ses_A"] < x["ses_B"]) != (x["ses_a1"] < x["ses_b1"]) {
		t.Errorf("edges cross: A %.0f, B %.0f, a1 %.0f, b1 %.0f", x["ses_A"], x["ses_B"], x["ses_a1"], x["ses_b1"])
	}
}

// TestLayoutLongEdge checks that an edge spanning layers passes through
// its own slot in each: no node box sits on one of its points.
func TestLayoutLongEdge(t *testing.T) {
	g := &Graph{
		Nodes: []Node{{ID: "ses_R"}, {ID: "ses_x"}, {ID: "ses_y"}, {ID: "ses_M"}},
		Edges: []Edge{{From: "ses_R", To: "ses_x"}, {From: "ses_x", To: "ses_y"}, {From: "ses_y", To: "ses_M"}, {From: "ses_R", To: "ses_M"}},
	}
	d := Layout(g)
	checkLayout(t, g, d)
	long := d.Edges[3]
	for _, pt := range long.Points[1 : len(long.Points)-1] {
		for _, p := range d.Nodes {
			if pt.X > p.X-p.W/2 && pt.X < p.X+p.W/2 && pt.Y > p.Y-p.H/2 && pt.Y < p.Y+p.H/2 {
				t.Errorf("the long edge passes through node %s at %v", p.Node.ID, pt)
			}
		}
	}
}

// TestLayoutCycle checks that a graph with a cycle (which lineage never
// has) still lays out without hanging or panicking.
func TestLayoutCycle(t *testing.T) {
	g := &Graph{
		Nodes: []Node{{ID: "ses_A"}, {ID: "ses_B"}},
		Edges: []Edge{{From: "ses_A", To: "ses_B"}, {From: "ses_B", To: "ses_A"}, {From: "ses_A", To: "ses_gone"}},
	}
	d := Layout(g)
	if len(d.Nodes) != 2 || len(d.Edges) != 3 || len(d.Edges[2].Points) != 0 {
		t.Errorf("nodes %d, edges %d, route to a missing node %v", len(d.Nodes), len(d.Edges), d.Edges[2].Points)
	}
}

// BenchmarkLayout lays out a 1,000-session family (layout), and lays it
// out and writes its SVG (svg).
func BenchmarkLayout(b *testing.B) {
	g := family(1000, 1)
	b.Run("layout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Layout(g)
		}
	})
	b.Run("svg", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = drawSVG(g)
		}
	})
}
