package export

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/session/openrath"
	"github.com/openrath/rath/store"
)

// checkLineage refuses a session whose lineage would close a cycle in st:
// one that names itself as a parent, or one with a parent that descends
// from it. Edges may name sessions the store does not hold (an imported
// child arrives before its parent), so the walk goes up from s's parents
// through the recorded parents of every stored session it meets; a session
// not stored has no recorded parents and ends its path. The error wraps
// openrath.ErrCycle.
func checkLineage(ctx context.Context, st store.Store, s *session.Session) error {
	parents := s.Lineage().Parents
	if slices.Contains(parents, s.ID()) {
		return fmt.Errorf("%w: session %s names itself as a parent", openrath.ErrCycle, s.ID())
	}
	seen := map[session.ID]session.ID{} // each visited id -> the id it was reached from
	frontier := make([]session.ID, 0, len(parents))
	for _, p := range parents {
		if _, ok := seen[p]; !ok {
			seen[p] = ""
			frontier = append(frontier, p)
		}
	}
	for len(frontier) > 0 {
		var next []session.ID
		for _, id := range frontier {
			ps, err := st.Parents(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			for _, p := range ps {
				if p == s.ID() {
					return fmt.Errorf("%w: session %s would be its own ancestor (through %s)", openrath.ErrCycle, s.ID(), path(seen, id))
				}
				if _, ok := seen[p]; !ok {
					seen[p] = id
					next = append(next, p)
				}
			}
		}
		frontier = next
	}
	return nil
}

// path lists the ids from one of the new session's parents down to id,
// for the error.
func path(seen map[session.ID]session.ID, id session.ID) string {
	out := string(id)
	for from := seen[id]; from != ""; from = seen[from] {
		out = string(from) + " → " + out
	}
	return out
}
