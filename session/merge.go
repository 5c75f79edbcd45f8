package session

import (
	"fmt"
	"sort"
	"strconv"
)

// Side names one of the two sessions of a merge.
type Side int

// The sides of a.Merge(b): Ours is a, Theirs is b.
const (
	Ours Side = iota + 1
	Theirs
)

// MergeOption adjusts Merge.
type MergeOption func(*mergeConfig)

type mergeConfig struct {
	keep     Side
	op       string
	recorded Rechained
}

// KeepPlacement resolves a placement conflict: the merged session is placed
// where side was. Without it, merging sessions placed on different backends
// or specs fails with ErrIncompatible.
func KeepPlacement(side Side) MergeOption { return func(c *mergeConfig) { c.keep = side } }

// MergeOp names the operation in the merged session's lineage (default
// "merge"), for modules such as a parallel join that merge on their own
// behalf.
func MergeOp(op string) MergeOption { return func(c *mergeConfig) { c.op = op } }

// Rechained looks up the re-chained copy a record holds of the chunk whose
// id is origin: the copy's parent and id, ok false if the record has none.
type Rechained func(origin ChunkID) (parent, id ChunkID, ok bool)

// Recorded gives a merge the record of the same merge made before, as a
// replay has it: a chunk re-chained onto the parent the record shows for
// its copy takes the copy's id instead of being encoded and hashed again,
// so replaying a join costs lookups, not hashing. The chunk is the one the
// copy was made from (its id is the copy's Origin, and an id covers the
// chunk), so the id is the one hashing would give — provided the record's
// ids are sound: like Assemble, the merge trusts them, and Verify checks
// them. A chunk the record does not show re-chained there is hashed.
func Recorded(r Rechained) MergeOption { return func(c *mergeConfig) { c.recorded = r } }

// Merge joins two branches. The result is their common prefix (found by
// chunk id), then this session's suffix unchanged, then o's suffix re-chained
// after it: each of those chunks gets a new parent and id and keeps its old
// id as Origin. The result has a new id and merge lineage naming both
// parents. Usage is that of the merged chain, so the shared prefix counts
// once.
//
// Placements must be compatible (see Placement.Compatible) unless
// KeepPlacement says which side wins; if the chain would otherwise end on the
// other side's placement, a placement chunk restating the winner is appended.
// Merge costs O(suffixes + log(prefix)), independent of the prefix length.
func (s *Session) Merge(o *Session, opts ...MergeOption) (*Session, error) {
	cfg := mergeConfig{op: "merge"}
	for _, opt := range opts {
		opt(&cfg)
	}
	p := commonPrefix(s.t, o.t)
	t, err := mergeInto(s.t, o, cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("merge %s with %s: %w", s.id, o.id, err)
	}
	return &Session{id: NewID(), t: t, lin: &Lineage{
		Parents: []ID{s.id, o.id},
		Op:      cfg.op,
		Kind:    LineageMerge,
		Extras: map[string]string{
			"common_prefix": strconv.Itoa(p),
			"ours":          strconv.Itoa(s.t.n - p),
			"theirs":        strconv.Itoa(o.t.n - p),
		},
	}}, nil
}

// commonPrefix returns how many leading chunks a and b share. Because an id
// covers its whole chain, equal ids at index i imply equal chunks at every
// index below i, so a binary search finds the boundary.
func commonPrefix(a, b tree) int {
	n := min(a.n, b.n)
	// sort.Search finds the first k in [0,n] whose chunk differs; the chunks
	// before it are shared.
	return sort.Search(n, func(k int) bool {
		ea, eb := a.get(k), b.get(k)
		return ea != eb && ea.ID != eb.ID
	})
}

func samePlacement(a, b Placement) bool {
	return a.Backend == b.Backend && a.Spec.Equal(b.Spec) && a.SandboxID == b.SandboxID &&
		a.TreeHash == b.TreeHash && a.ClonedFrom == b.ClonedFrom
}

func describePlacement(p Placement) string {
	if p.IsZero() {
		return "nothing"
	}
	s := p.Backend
	if p.Spec.Image != "" {
		s += " image " + p.Spec.Image
	}
	if p.Spec.Dir != "" {
		s += " dir " + p.Spec.Dir
	}
	return s
}
