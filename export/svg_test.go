package export

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
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
	svg, err := SVG(ctx, g)
	if _, lerr := exec.LookPath("dot"); lerr != nil {
		if !errors.Is(err, ErrNoGraphviz) {
			t.Fatalf("without dot: err = %v, want ErrNoGraphviz", err)
		}
		t.Skip("Graphviz (dot) is not installed: install graphviz to test SVG rendering (scripts/test does)")
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
}
