package export

import (
	"cmp"
	"slices"

	"github.com/openrath/rath/session"
)

// Layout geometry, in SVG user units (pixels at 100%).
const (
	layoutCharW   = 6.2 // average glyph width of the 10px label font
	layoutLineH   = 13  // label line height
	layoutPadX    = 10  // horizontal padding inside a node
	layoutPadY    = 7   // vertical padding inside a node
	layoutGapX    = 28  // least horizontal gap between two cells of a layer
	layoutGapY    = 56  // vertical gap between two layers
	layoutMargin  = 12  // blank border around the drawing
	layoutDummyW  = 8   // width reserved for an edge passing through a layer
	layoutSweeps  = 8   // barycentre sweeps (down and up) to reduce crossings
	layoutSmooths = 12  // coordinate passes pulling cells over their neighbours
)

// Drawing is a layered layout of a Graph: every node has a layer (parents
// in lower layers than their children, drawn above them) and a box, and
// every edge a polyline from the bottom of its parent to the top of its
// child.
type Drawing struct {
	Width, Height float64
	// Nodes follow the order of the graph's nodes.
	Nodes []Placed
	// Edges follow the order of the graph's edges.
	Edges []Route
}

// Placed is one node of a Drawing: the graph node, its layer, its box (X,
// Y the centre; W, H the size) and the lines of its label.
type Placed struct {
	Node       Node
	Layer      int
	X, Y, W, H float64
	Lines      []string
}

// Route is one edge of a Drawing: the points it passes through, from the
// parent's bottom to the child's top.
type Route struct {
	Edge   Edge
	Points []Point
}

// Point is a position in a Drawing.
type Point struct{ X, Y float64 }

// cell is one slot of a layer during layout: a node, or a dummy that a
// long edge passes through.
type cell struct {
	node     int // index in the graph's nodes, or -1 for a dummy
	w, x     float64
	pos      int     // index in its layer
	bary     float64 // sort key of the current sweep
	up, down []*cell // linked cells of the layers above and below
}

// Layout lays g out in layers, top to bottom: longest-path layering (a
// node sits one layer below its deepest parent), dummy cells where an edge
// spans several layers, barycentre sweeps that order each layer to reduce
// crossings, and coordinate passes that centre cells over their neighbours
// without letting two cells of a layer overlap. The result depends only on
// g. An edge that would close a cycle (lineage has none) or names a node
// the graph lacks is drawn as a straight line, or not at all.
func Layout(g *Graph) *Drawing {
	index := make(map[session.ID]int, len(g.Nodes))
	for i, nd := range g.Nodes {
		index[nd.ID] = i
	}
	layer := layers(g, index)
	d := &Drawing{Nodes: make([]Placed, len(g.Nodes)), Edges: make([]Route, 0, len(g.Edges))}
	var rows [][]*cell
	addCell := func(l int, c *cell) {
		for len(rows) <= l {
			rows = append(rows, nil)
		}
		c.pos = len(rows[l])
		rows[l] = append(rows[l], c)
	}
	cells := make([]*cell, len(g.Nodes))
	for i, nd := range g.Nodes {
		lines := nodeLines(nd)
		if o := outcomeOf(nd); o != "" {
			lines = append(lines, o) // said in words, not by colour alone
		}
		w := 0
		for _, s := range lines {
			w = max(w, len([]rune(s)))
		}
		d.Nodes[i] = Placed{Node: nd, Layer: layer[i], Lines: lines,
			W: float64(w)*layoutCharW + 2*layoutPadX, H: float64(len(lines))*layoutLineH + 2*layoutPadY}
		cells[i] = &cell{node: i, w: d.Nodes[i].W}
		addCell(layer[i], cells[i])
	}
	chains := make([][]*cell, len(g.Edges))
	for e, ed := range g.Edges {
		from, okf := index[ed.From]
		to, okt := index[ed.To]
		if !okf || !okt || layer[from] >= layer[to] {
			continue
		}
		chain := []*cell{cells[from]}
		for l := layer[from] + 1; l < layer[to]; l++ {
			c := &cell{node: -1, w: layoutDummyW}
			addCell(l, c)
			chain = append(chain, c)
		}
		chain = append(chain, cells[to])
		for k := 1; k < len(chain); k++ {
			chain[k-1].down = append(chain[k-1].down, chain[k])
			chain[k].up = append(chain[k].up, chain[k-1])
		}
		chains[e] = chain
	}
	orderRows(rows)
	placeRows(rows)
	// Each layer is as tall as its tallest box; nodes sit on its middle.
	y := float64(layoutMargin)
	mids := make([]float64, len(rows))
	for l, row := range rows {
		h := 0.0
		for _, c := range row {
			if c.node >= 0 {
				h = max(h, d.Nodes[c.node].H)
			}
			d.Width = max(d.Width, c.x+c.w/2+layoutMargin)
		}
		mids[l] = y + h/2
		for _, c := range row {
			if c.node >= 0 {
				d.Nodes[c.node].X, d.Nodes[c.node].Y = c.x, mids[l]
			}
		}
		y += h + layoutGapY
	}
	d.Width = max(d.Width, 2*layoutMargin)
	d.Height = max(y-layoutGapY+layoutMargin, 2*layoutMargin)
	for e, ed := range g.Edges {
		r := Route{Edge: ed}
		from, okf := index[ed.From]
		to, okt := index[ed.To]
		if okf && okt {
			a, b := d.Nodes[from], d.Nodes[to]
			r.Points = append(r.Points, Point{a.X, a.Y + a.H/2})
			if chains[e] != nil {
				for k, c := range chains[e][1 : len(chains[e])-1] {
					r.Points = append(r.Points, Point{c.x, mids[layer[from]+1+k]})
				}
			}
			r.Points = append(r.Points, Point{b.X, b.Y - b.H/2})
		}
		d.Edges = append(d.Edges, r)
	}
	return d
}

// layers assigns each node its longest-path layer: 0 for a node with no
// parent in the graph, else one more than its deepest parent. Edges are
// walked in a topological order (Kahn's algorithm); nodes on a cycle,
// which lineage cannot make, keep the layer their acyclic parents give.
func layers(g *Graph, index map[session.ID]int) []int {
	n := len(g.Nodes)
	layer := make([]int, n)
	indeg := make([]int, n)
	out := make([][]int, n)
	for _, e := range g.Edges {
		f, okf := index[e.From]
		t, okt := index[e.To]
		if !okf || !okt || f == t {
			continue
		}
		out[f] = append(out[f], t)
		indeg[t]++
	}
	queue := make([]int, 0, n)
	for i := range n {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, t := range out[f] {
			layer[t] = max(layer[t], layer[f]+1)
			if indeg[t]--; indeg[t] == 0 {
				queue = append(queue, t)
			}
		}
	}
	return layer
}

// orderRows orders each layer to reduce edge crossings: sweeps down then
// up, each sorting a layer by the mean position of its links in the layer
// just swept. Ties keep their order, so the result is deterministic.
func orderRows(rows [][]*cell) {
	for s := range layoutSweeps {
		if s%2 == 0 {
			for l := 1; l < len(rows); l++ {
				sortRow(rows[l], func(c *cell) []*cell { return c.up })
			}
		} else {
			for l := len(rows) - 2; l >= 0; l-- {
				sortRow(rows[l], func(c *cell) []*cell { return c.down })
			}
		}
	}
}

// sortRow sorts row by the barycentre of each cell's links; a cell with
// no link keeps its current position as its key.
func sortRow(row []*cell, links func(*cell) []*cell) {
	for _, c := range row {
		ns := links(c)
		if len(ns) == 0 {
			c.bary = float64(c.pos)
			continue
		}
		sum := 0.0
		for _, o := range ns {
			sum += float64(o.pos)
		}
		c.bary = sum / float64(len(ns))
	}
	slices.SortStableFunc(row, func(a, b *cell) int { return cmp.Compare(a.bary, b.bary) })
	for i, c := range row {
		c.pos = i
	}
}

// placeRows gives every cell an x: packed left to right at first, then a
// few passes move each cell towards the mean x of its links, and each
// layer is packed again in order so no two cells overlap.
func placeRows(rows [][]*cell) {
	for _, row := range rows {
		x := float64(layoutMargin)
		for _, c := range row {
			c.x = x + c.w/2
			x += c.w + layoutGapX
		}
	}
	for s := range layoutSmooths {
		for l := range rows {
			if s%2 == 0 {
				l = len(rows) - 1 - l // alternate upwards and downwards passes
			}
			row := rows[l]
			for _, c := range row {
				n := len(c.up) + len(c.down)
				if n == 0 {
					continue
				}
				sum := 0.0
				for _, o := range c.up {
					sum += o.x
				}
				for _, o := range c.down {
					sum += o.x
				}
				c.x = sum / float64(n)
			}
			separate(row)
		}
	}
	// Shift the drawing so its leftmost cell touches the margin.
	minX := 0.0
	first := true
	for _, row := range rows {
		for _, c := range row {
			if l := c.x - c.w/2; first || l < minX {
				minX, first = l, false
			}
		}
	}
	for _, row := range rows {
		for _, c := range row {
			c.x += layoutMargin - minX
		}
	}
}

// separate pushes the cells of a layer apart, keeping their order, so that
// neighbours are at least layoutGapX apart, then shifts the layer so its
// mean x is what the wanted positions asked for.
func separate(row []*cell) {
	if len(row) == 0 {
		return
	}
	want := 0.0
	for _, c := range row {
		want += c.x
	}
	for i := 1; i < len(row); i++ {
		a, b := row[i-1], row[i]
		if least := a.x + (a.w+b.w)/2 + layoutGapX; b.x < least {
			b.x = least
		}
	}
	got := 0.0
	for _, c := range row {
		got += c.x
	}
	shift := (want - got) / float64(len(row))
	for _, c := range row {
		c.x += shift
	}
}
