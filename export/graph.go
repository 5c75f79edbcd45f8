package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Graph is the lineage graph around one session: the sessions it came from,
// the sessions made from it, and the edges between them.
type Graph struct {
	// Root is the session the graph was loaded around.
	Root  session.ID `json:"root"`
	Nodes []Node     `json:"nodes"`
	Edges []Edge     `json:"edges"`
}

// Node is one session of a Graph, described by its stored metadata.
type Node struct {
	ID      session.ID        `json:"id"`
	Op      string            `json:"op"`
	Kind    string            `json:"kind"`
	Status  string            `json:"status"`
	Len     int               `json:"len"`
	Head    session.ChunkID   `json:"head,omitempty"`
	Created time.Time         `json:"created"`
	Updated time.Time         `json:"updated"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// Edge says that session To was made from session From by Op (the child's
// lineage op): From is the parent, To the child.
type Edge struct {
	From session.ID `json:"from"`
	To   session.ID `json:"to"`
	Op   string     `json:"op"`
}

// LoadGraph returns the lineage graph around id: id, its ancestors and
// descendants (store.Ancestors/Descendants), and the other parents of merges
// among them. Nodes are sorted by creation time (then id); edges follow the
// order of their child nodes and, for one child, the order of its parents.
// Sessions removed by GC appear neither as nodes nor as edge ends.
func LoadGraph(ctx context.Context, st store.Store, id session.ID) (*Graph, error) {
	root, err := st.Info(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: graph of %s: %w", id, err)
	}
	anc, err := st.Ancestors(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: graph of %s: %w", id, err)
	}
	desc, err := st.Descendants(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export: graph of %s: %w", id, err)
	}
	infos := map[session.ID]store.Info{id: root}
	for _, n := range slices.Concat(anc, desc) {
		if err := addInfo(ctx, st, infos, n); err != nil {
			return nil, fmt.Errorf("export: graph of %s: %w", id, err)
		}
	}
	// The other parents of merges: a merge below id names a branch that is
	// neither id's ancestor nor its descendant.
	var others []session.ID
	for _, in := range infos {
		if len(in.Lineage.Parents) > 1 {
			for _, p := range in.Lineage.Parents {
				if _, ok := infos[p]; !ok {
					others = append(others, p)
				}
			}
		}
	}
	for _, p := range others {
		if err := addInfo(ctx, st, infos, p); err != nil {
			return nil, fmt.Errorf("export: graph of %s: %w", id, err)
		}
	}
	return buildGraph(id, infos), nil
}

// addInfo adds the stored metadata of id to infos; a session that is not
// stored (removed by GC since the walk) is left out.
func addInfo(ctx context.Context, st store.Store, infos map[session.ID]store.Info, id session.ID) error {
	if _, ok := infos[id]; ok {
		return nil
	}
	in, err := st.Info(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	infos[id] = in
	return nil
}

// buildGraph turns stored metadata into a sorted Graph.
func buildGraph(root session.ID, infos map[session.ID]store.Info) *Graph {
	g := &Graph{Root: root, Nodes: make([]Node, 0, len(infos)), Edges: []Edge{}}
	for _, in := range infos {
		g.Nodes = append(g.Nodes, nodeOf(in))
	}
	slices.SortFunc(g.Nodes, func(a, b Node) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, n := range g.Nodes {
		lin := infos[n.ID].Lineage
		seen := map[session.ID]bool{}
		for _, p := range lin.Parents {
			if _, ok := infos[p]; ok && !seen[p] {
				seen[p] = true
				g.Edges = append(g.Edges, Edge{From: p, To: n.ID, Op: lin.Op})
			}
		}
	}
	return g
}

// nodeOf describes a stored session as a graph node, with times in UTC.
func nodeOf(in store.Info) Node {
	n := Node{
		ID: in.ID, Op: in.Lineage.Op, Kind: string(in.Lineage.Kind), Status: string(in.Status),
		Len: in.Len, Head: in.Head, Created: in.Created.UTC(), Updated: in.Updated.UTC(),
	}
	if len(in.Labels) > 0 {
		n.Labels = in.Labels
	}
	return n
}

// node returns the node with the given id, if the graph has it.
func (g *Graph) node(id session.ID) (Node, bool) {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}
