package session

import (
	"maps"
	"slices"
)

// LineageKind classifies how a session came to be.
type LineageKind string

// Lineage kinds stamped by this package. Modules stamp LineageDerive with an
// Op naming themselves (for example "agent:coder").
const (
	LineageLeaf       LineageKind = "leaf"        // an empty session made by New
	LineageLeafUser   LineageKind = "leaf_user"   // FromUser
	LineageLeafSystem LineageKind = "leaf_system" // FromSystem
	LineageFork       LineageKind = "fork"
	LineageDetach     LineageKind = "detach"
	LineageMerge      LineageKind = "merge"
	LineageImport     LineageKind = "import"
	LineageDerive     LineageKind = "derive" // produced by a module from its parents
)

// Lineage says where a session came from: the sessions it was made from,
// the operation that made it, and free-form facts about that operation.
type Lineage struct {
	Parents []ID              `json:"parents"`
	Op      string            `json:"op"`
	Kind    LineageKind       `json:"kind"`
	Extras  map[string]string `json:"extras,omitempty"`
}

// clone returns a deep copy, so callers can never reach a session's own.
func (l Lineage) clone() Lineage {
	l.Parents = slices.Clone(l.Parents)
	l.Extras = maps.Clone(l.Extras)
	if l.Parents == nil {
		l.Parents = []ID{}
	}
	return l
}
