package export

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestSVG(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	l := buildLineage(t, st)
	g, err := LoadGraph(ctx, st, l.m.ID())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // drawn natively: no dot needed
	svg, err := SVG(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, svg)
	}
	for _, n := range g.Nodes {
		title := "<title>" + string(n.ID) + "</title>"
		if c := strings.Count(string(svg), title); c != 1 {
			t.Errorf("node %s titled %d times, want once", n.ID, c)
		}
	}
	if c := strings.Count(string(svg), `class="node`); c != len(g.Nodes) {
		t.Errorf("%d node groups, want %d", c, len(g.Nodes))
	}
	if c := strings.Count(string(svg), `class="edge`); c != len(g.Edges) {
		t.Errorf("%d edge groups, want %d", c, len(g.Edges))
	}
	if !strings.Contains(string(svg), `class="node" data-session-id="`+string(l.m.ID())+`" data-status="open" data-root=""`) {
		t.Errorf("the root node is not marked root:\n%s", svg)
	}
	page, ok := inlineSVG(string(svg))
	if !ok || strings.Contains(string(page), "http") {
		t.Errorf("inline SVG refused or still has URLs (ok=%v):\n%s", ok, page)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := SVG(ctx2, g); !errors.Is(err, context.Canceled) {
		t.Errorf("SVG after cancel: err = %v, want context.Canceled", err)
	}
}

// An edge is labelled only with an op its child's box does not show.
func TestSVGEdgeLabels(t *testing.T) {
	g := &Graph{
		Nodes: []Node{{ID: "ses_A", Op: "from_user"}, {ID: "ses_B", Op: "fork"}, {ID: "ses_C", Op: "merge"}},
		Edges: []Edge{{From: "ses_A", To: "ses_B", Op: "fork"}, {From: "ses_A", To: "ses_C", Op: "adopt"}},
	}
	svg := string(drawSVG(g))
	if strings.Count(svg, ">fork</text>") != 1 || !strings.Contains(svg, ">adopt</text>") {
		t.Errorf("edge labels: want fork once (in its node) and adopt on its edge:\n%s", svg)
	}
}

func TestSVGEscapes(t *testing.T) {
	g := &Graph{Root: "ses_A", Nodes: []Node{{ID: "ses_A", Op: `<script>"&'`, Status: `x"y`}}, Edges: []Edge{}}
	svg := string(drawSVG(g))
	if strings.Contains(svg, "<script>") || strings.Contains(svg, `x"y`) {
		t.Errorf("markup from a label reached the SVG:\n%s", svg)
	}
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Errorf("not well-formed: %v", err)
	}
}

func TestGraphvizSVG(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	l := buildLineage(t, st)
	g, err := LoadGraph(ctx, st, l.m.ID())
	if err != nil {
		t.Fatal(err)
	}
	svg, err := GraphvizSVG(ctx, g)
	if _, lerr := exec.LookPath("dot"); lerr != nil {
		if !errors.Is(err, ErrNoGraphviz) {
			t.Fatalf("without dot: err = %v, want ErrNoGraphviz", err)
		}
		t.Skip("Graphviz (dot) is not installed: install graphviz to test its SVG rendering (scripts/test does)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte(l.m.ID()[len(l.m.ID())-8:])) {
		t.Errorf("SVG lacks <svg> or the merge node:\n%s", svg)
	}
	page, ok := inlineSVG(string(svg))
	if !ok || bytes.Contains([]byte(page), []byte("http")) {
		t.Errorf("inline SVG refused or still has URLs (ok=%v):\n%s", ok, page)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := GraphvizSVG(ctx, g); !errors.Is(err, ErrNoGraphviz) {
		t.Errorf("with dot off PATH: err = %v, want ErrNoGraphviz", err)
	}
}
