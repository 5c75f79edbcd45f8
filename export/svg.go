package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// SVG draws g as SVG with the package's own layered layout (see Layout):
// no external program, the same drawing on every machine. Nodes are
// <g class="node"> groups titled by session id, edges <g class="edge">
// groups, as Graphviz writes them; see GraphvizSVG for Graphviz's drawing.
func SVG(ctx context.Context, g *Graph) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("export: draw graph: %w", err)
	}
	return drawSVG(g), nil
}

// GraphvizSVG lays g out with Graphviz (`dot -Tsvg`, found on PATH;
// ErrNoGraphviz if absent) and returns the SVG bytes.
func GraphvizSVG(ctx context.Context, g *Graph) ([]byte, error) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGraphviz, err)
	}
	cmd := exec.CommandContext(ctx, dot, "-Tsvg")
	cmd.Stdin = strings.NewReader(g.dot())
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("export: graphviz: %w", ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return nil, fmt.Errorf("export: graphviz dot -Tsvg: %w", err)
		}
		return nil, fmt.Errorf("export: graphviz dot -Tsvg: %w: %s", err, msg)
	}
	if !bytes.Contains(out.Bytes(), []byte("<svg")) {
		return nil, errors.New("export: graphviz dot -Tsvg wrote no <svg> element")
	}
	return out.Bytes(), nil
}
