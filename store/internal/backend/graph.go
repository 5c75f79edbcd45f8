package backend

import "github.com/openrath/rath/session"

// Breadth walks the lineage graph breadth first from start, nearest first,
// for a backend's Ancestors (next gives parents) or Descendants (next gives
// children). stored reports which ids of a frontier are stored sessions:
// sessions removed by GC are walked through but not listed.
func Breadth(start session.ID, next func(session.ID) ([]session.ID, error),
	stored func([]session.ID) (map[session.ID]bool, error)) ([]session.ID, error) {
	seen := map[session.ID]bool{start: true}
	var out []session.ID
	for frontier := []session.ID{start}; len(frontier) > 0; {
		var nextFrontier []session.ID
		for _, id := range frontier {
			ns, err := next(id)
			if err != nil {
				return nil, err
			}
			for _, n := range ns {
				if !seen[n] {
					seen[n] = true
					nextFrontier = append(nextFrontier, n)
				}
			}
		}
		if len(nextFrontier) > 0 {
			have, err := stored(nextFrontier)
			if err != nil {
				return nil, err
			}
			for _, n := range nextFrontier {
				if have[n] {
					out = append(out, n)
				}
			}
		}
		frontier = nextFrontier
	}
	return out, nil
}

// StoredParent is a stored parent of a session being created: a candidate
// base lane.
type StoredParent struct {
	Ref  LaneRef
	Len  int
	Head session.ChunkID
}

// BestBase returns which of the stored parents shares the longest prefix
// with s, and how long that prefix is; -1 and 0 if none shares any. A new
// session's lane is based on that parent, so only its suffix is written.
func BestBase(src LaneSource, s *session.Session, parents []StoredParent) (best, shared int, err error) {
	best = -1
	for i, p := range parents {
		if min(p.Len, s.Len()) <= shared {
			continue
		}
		k, err := SharedPrefix(src, p.Ref, p.Len, p.Head, s)
		if err != nil {
			return -1, 0, err
		}
		if k > shared {
			best, shared = i, k
		}
	}
	return best, shared, nil
}
