package export

import (
	"fmt"
	"strings"
)

// mermaid renders g as a Mermaid flowchart (top down).
func (g *Graph) mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, n := range g.Nodes {
		lines := nodeLines(n)
		for i := range lines {
			lines[i] = mermaidEscape(oneLine(lines[i]))
		}
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", mermaidID(string(n.ID)), strings.Join(lines, "<br/>"))
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s -->|\"%s\"| %s\n", mermaidID(string(e.From)), mermaidEscape(oneLine(e.Op)), mermaidID(string(e.To)))
	}
	for _, n := range g.Nodes {
		if c, ok := statusColour[n.Status]; ok {
			fmt.Fprintf(&b, "  style %s fill:%s\n", mermaidID(string(n.ID)), c)
		}
	}
	if _, ok := g.node(g.Root); ok {
		fmt.Fprintf(&b, "  style %s stroke:#1a56db,stroke-width:3px\n", mermaidID(string(g.Root)))
	}
	return b.String()
}

// mermaidID keeps the characters Mermaid accepts in a node id (session ids
// are made of them already) and replaces the others with "_".
func mermaidID(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// mermaidEscape makes s safe inside a quoted Mermaid label, using Mermaid's
// entity codes for the characters that would end or mark up the label.
func mermaidEscape(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;", "#", "#35;").Replace(s)
}
