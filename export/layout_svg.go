package export

import (
	"fmt"
	"html"
	"strings"

	"github.com/openrath/rath/session"
)

// Edge and node styling of the native drawing. The colours are
// presentation attributes, so the SVG looks the same inline in a page,
// opened alone, or in the viewer.
const (
	svgFont       = "Helvetica,Arial,sans-serif"
	svgArrow      = 7.0 // arrowhead length
	svgRootStroke = "#1a56db"
)

// outcomeColour is the stroke colour of a node or edge on a judged
// branch (see outcomes).
var outcomeColour = map[string]string{
	OutcomeAccepted: "#188038",
	OutcomeRejected: "#c5221f",
}

// drawSVG renders a layout of g as SVG, shaped like Graphviz's output so
// the same code reads both: a <g class="graph">, one <g class="node"> per
// session whose <title> is the session id, and one <g class="edge"> per
// edge whose <title> is "parent->child". Attributes add what a page may
// style or test: data-session-id, data-status and data-root (the session
// the graph is about) on nodes, data-from and data-to on edges, and
// data-outcome ("accepted" or "rejected") on the nodes and edges of a
// judged branch.
func drawSVG(g *Graph) []byte {
	d := Layout(g)
	out := outcomes(g)
	ops := make(map[session.ID]string, len(g.Nodes))
	for _, n := range g.Nodes {
		ops[n.ID] = n.Op
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0fpt" height="%.0fpt" viewBox="0 0 %.2f %.2f" class="lineage">`+"\n",
		d.Width*0.75, d.Height*0.75, d.Width, d.Height)
	b.WriteString(`<g id="graph0" class="graph">` + "\n")
	fmt.Fprintf(&b, `<title>lineage of %s</title>`+"\n", esc(string(g.Root)))
	for i, r := range d.Edges {
		if len(r.Points) < 2 {
			continue
		}
		attrs, stroke := "", "#5f6368"
		if o := edgeOutcome(out, r.Edge); o != "" {
			attrs, stroke = ` data-outcome="`+o+`"`, outcomeColour[o]
		}
		fmt.Fprintf(&b, `<g id="edge%d" class="edge" data-from="%s" data-to="%s"%s>`, i+1, esc(string(r.Edge.From)), esc(string(r.Edge.To)), attrs)
		fmt.Fprintf(&b, `<title>%s</title>`, esc(string(r.Edge.From)+"->"+string(r.Edge.To)))
		fmt.Fprintf(&b, `<path fill="none" stroke="%s" stroke-width="1.2" d="%s"/>`, stroke, edgePath(r.Points))
		end := r.Points[len(r.Points)-1]
		fmt.Fprintf(&b, `<polygon fill="%s" stroke="%s" points="%.2f,%.2f %.2f,%.2f %.2f,%.2f"/>`, stroke, stroke,
			end.X, end.Y, end.X-svgArrow/2, end.Y-svgArrow, end.X+svgArrow/2, end.Y-svgArrow)
		// A child's box already names the op that made it; an edge says
		// it only when it differs.
		if op := oneLine(r.Edge.Op); op != "" && op != oneLine(ops[r.Edge.To]) {
			at := labelPoint(r.Points)
			fmt.Fprintf(&b, `<text x="%.2f" y="%.2f" font-family="%s" font-size="9" fill="#5f6368">%s</text>`, at.X+4, at.Y, svgFont, esc(op))
		}
		b.WriteString("</g>\n")
	}
	for i, p := range d.Nodes {
		id := string(p.Node.ID)
		attrs := ` data-status="` + esc(p.Node.Status) + `"`
		stroke, width := "#3c4043", 1.0
		if o := out[p.Node.ID]; o != "" {
			attrs += ` data-outcome="` + o + `"`
			stroke, width = outcomeColour[o], 2.0
		}
		if p.Node.ID == g.Root {
			attrs += ` data-root=""`
			stroke, width = svgRootStroke, 2.5
		}
		fill, ok := statusColour[p.Node.Status]
		if !ok {
			fill = "#ffffff"
		}
		fmt.Fprintf(&b, `<g id="node%d" class="node" data-session-id="%s"%s>`, i+1, esc(id), attrs)
		fmt.Fprintf(&b, `<title>%s</title>`, esc(id))
		fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" rx="6" ry="6" fill="%s" stroke="%s" stroke-width="%.1f"/>`,
			p.X-p.W/2, p.Y-p.H/2, p.W, p.H, fill, stroke, width)
		top := p.Y - p.H/2 + layoutPadY + layoutLineH*0.75
		for k, line := range p.Lines {
			fmt.Fprintf(&b, `<text text-anchor="middle" x="%.2f" y="%.2f" font-family="%s" font-size="10">%s</text>`,
				p.X, top+float64(k)*layoutLineH, svgFont, esc(oneLine(line)))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n</svg>\n")
	return []byte(b.String())
}

// edgePath draws a route as cubic curves, each leaving and entering its
// points vertically, and stops the last one at the arrowhead's base.
func edgePath(pts []Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "M%.2f,%.2f", pts[0].X, pts[0].Y)
	for k := 1; k < len(pts); k++ {
		p, q := pts[k-1], pts[k]
		if k == len(pts)-1 {
			q.Y -= svgArrow
		}
		mid := (p.Y + q.Y) / 2
		fmt.Fprintf(&b, " C%.2f,%.2f %.2f,%.2f %.2f,%.2f", p.X, mid, q.X, mid, q.X, q.Y)
	}
	return b.String()
}

// labelPoint is where an edge's label goes: the middle of its middle
// segment.
func labelPoint(pts []Point) Point {
	k := len(pts) / 2
	p, q := pts[k-1], pts[k]
	return Point{(p.X + q.X) / 2, (p.Y + q.Y) / 2}
}

// esc escapes text for SVG content and attribute values.
func esc(s string) string { return html.EscapeString(s) }
