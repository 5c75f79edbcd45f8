package export

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/openrath/rath/session"
)

// Graph formats accepted by Graph.Write.
const (
	FormatJSON    = "json"
	FormatDOT     = "dot"
	FormatMermaid = "mermaid"
)

// Write writes g as "json" (indented), "dot" (Graphviz; node labels: short
// id, op, len, status; edge labels: op) or "mermaid" (flowchart TD). Other
// formats wrap ErrFormat.
func (g *Graph) Write(w io.Writer, format string) error {
	var err error
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		err = enc.Encode(g)
	case FormatDOT:
		_, err = io.WriteString(w, g.dot())
	case FormatMermaid:
		_, err = io.WriteString(w, g.mermaid())
	default:
		return fmt.Errorf("%w %q for a graph (want json, dot or mermaid)", ErrFormat, format)
	}
	if err != nil {
		return fmt.Errorf("export: write %s graph: %w", format, err)
	}
	return nil
}

// shortID abbreviates a session id for labels: its last eight digits, the
// random part that tells sessions made in the same millisecond apart.
func shortID(id session.ID) string {
	s := string(id)
	if len(s) <= 12 {
		return s
	}
	return "…" + s[len(s)-8:]
}

// nodeLines is what a node's label says, one item per line.
func nodeLines(n Node) []string {
	return []string{shortID(n.ID), n.Op, fmt.Sprintf("len %d", n.Len), n.Status}
}

// oneLine folds line breaks and tabs into spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
