package backend

import (
	"fmt"

	"github.com/openrath/rath/session"
)

// Bounds picks the chunks [from, to) to read, given a session's length: the
// one place Load, Tail and Range differ, for every backend.
type Bounds func(length int) (from, to int, err error)

// All reads the whole session.
func All(length int) (int, int, error) { return 0, length, nil }

// TailBounds reads the last n chunks (fewer if the session is shorter).
func TailBounds(n int) Bounds {
	return func(length int) (int, int, error) { return max(0, length-max(n, 0)), length, nil }
}

// RangeBounds reads chunks [from, to), which must lie within the session.
func RangeBounds(from, to int) Bounds {
	return func(length int) (int, int, error) {
		if from < 0 || to < from || to > length {
			return 0, 0, fmt.Errorf("%w: range [%d,%d) of a session with %d chunks", session.ErrRange, from, to, length)
		}
		return from, to, nil
	}
}

// Assembled builds a loaded session from its decoded (and so validated)
// chunks, and checks that the chain ends at the head the store recorded.
func Assembled(id session.ID, lin session.Lineage, head session.ChunkID, cs []session.Chunk) (*session.Session, error) {
	out, err := session.AssembleValidated(id, lin, cs)
	if err != nil {
		return nil, err
	}
	if out.Head() != head {
		return nil, fmt.Errorf("store: stored head %s but the chain ends at %s (corrupt database?)", head.Short(), out.Head().Short())
	}
	return out, nil
}
