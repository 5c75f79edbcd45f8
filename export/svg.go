package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// SVG lays g out with Graphviz (`dot -Tsvg`, found on PATH; ErrNoGraphviz if
// absent) and returns the SVG bytes.
func SVG(ctx context.Context, g *Graph) ([]byte, error) {
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
