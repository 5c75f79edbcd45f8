package export

import (
	"fmt"
	"strings"
)

// statusColour is the fill colour of a node by session status.
var statusColour = map[string]string{
	"open":     "#e8f0fe",
	"active":   "#fff4ce",
	"paused":   "#fde2c4",
	"closed":   "#e6f4ea",
	"archived": "#eeeeee",
	"failed":   "#fce8e6",
}

// dot renders g in the Graphviz DOT language.
func (g *Graph) dot() string {
	var b strings.Builder
	b.WriteString("digraph lineage {\n")
	b.WriteString("  rankdir=TB;\n")
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, fillcolor=\"#ffffff\"];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for _, n := range g.Nodes {
		lines := nodeLines(n)
		for i := range lines {
			lines[i] = dotEscape(oneLine(lines[i]))
		}
		attrs := fmt.Sprintf("label=\"%s\"", strings.Join(lines, `\n`))
		if c, ok := statusColour[n.Status]; ok {
			attrs += fmt.Sprintf(", fillcolor=\"%s\"", c)
		}
		if n.ID == g.Root {
			attrs += ", penwidth=2.5, color=\"#1a56db\""
		}
		fmt.Fprintf(&b, "  %s [%s];\n", dotID(string(n.ID)), attrs)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s -> %s [label=\"%s\"];\n", dotID(string(e.From)), dotID(string(e.To)), dotEscape(oneLine(e.Op)))
	}
	b.WriteString("}\n")
	return b.String()
}

// dotID quotes a node id.
func dotID(s string) string { return `"` + dotEscape(s) + `"` }

// dotEscape makes s safe inside a double-quoted DOT string: quotes and
// backslashes (which would start escapes such as \N or \l) are escaped.
func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "").Replace(s)
}
