package backend

import (
	"fmt"
	"sort"

	"github.com/openrath/rath/session"
)

// Backends store a session as a lane: its own chunks in segment rows under
// the lane's number, and its first BaseLen chunks in its base lane (the
// parent it was forked from), recursively, so a fork writes only its
// suffix. The walking of that structure is the same whatever the database,
// and lives here; a backend supplies a LaneSource over one transaction.

// LaneRef is what walking needs to know of a lane.
type LaneRef struct {
	Num     int64
	HasBase bool
	Base    int64 // the base lane, if HasBase
	BaseLen int   // chunks [0, BaseLen) live in the base lane
}

// LaneSource reads lanes and their segment rows inside one snapshot.
type LaneSource interface {
	// Lane returns lane num.
	Lane(num int64) (LaneRef, error)
	// Segments calls fn, in order of first, for the segment rows of lane num
	// that may hold chunks [from, to): the last one starting at or before
	// from, and every later one starting before to.
	Segments(num int64, from, to int, fn func(first, n int, data []byte) error) error
}

// WalkLane hands fn the encoded chunks [from, to) of lane l in order, base
// lanes first, one run per segment row: fs[0] is chunk `at` of the session.
// A missing chunk is reported as corruption, never skipped.
func WalkLane(src LaneSource, l LaneRef, from, to int, fn func(at int, fs []Frame) error) error {
	if from >= to {
		return nil
	}
	if from < l.BaseLen {
		if !l.HasBase {
			return fmt.Errorf("store: lane %d has %d base chunks but no base lane (corrupt database?)", l.Num, l.BaseLen)
		}
		base, err := src.Lane(l.Base)
		if err != nil {
			return err
		}
		if err := WalkLane(src, base, from, min(to, l.BaseLen), fn); err != nil {
			return err
		}
	}
	return walkOwn(src, l.Num, max(from, l.BaseLen), to, fn)
}

// walkOwn reads chunks [from, to) stored in the lane itself.
func walkOwn(src LaneSource, num int64, from, to int, fn func(at int, fs []Frame) error) error {
	if from >= to {
		return nil
	}
	next := from // the next chunk expected
	err := src.Segments(num, from, to, func(first, n int, data []byte) error {
		fs, err := DecodeSegment(data)
		if err != nil {
			return fmt.Errorf("store: lane %d segment at %d: %w", num, first, err)
		}
		if len(fs) != n {
			return fmt.Errorf("store: lane %d segment at %d holds %d chunks, its row says %d (corrupt database?)", num, first, len(fs), n)
		}
		lo, hi := max(next-first, 0), min(to-first, n)
		if lo >= hi {
			return nil
		}
		if first+lo != next {
			return fmt.Errorf("store: lane %d: chunk %d is missing (corrupt database?)", num, next)
		}
		next += hi - lo
		return fn(first+lo, fs[lo:hi])
	})
	if err != nil {
		return err
	}
	if next != to {
		return fmt.Errorf("store: lane %d: found %d of chunks [%d,%d) (corrupt database?)", num, next-from, from, to)
	}
	return nil
}

// LaneFrames collects the encoded chunks [from, to) of lane l.
func LaneFrames(src LaneSource, l LaneRef, from, to int) ([]Frame, error) {
	out := make([]Frame, 0, max(to-from, 0))
	err := WalkLane(src, l, from, to, func(_ int, fs []Frame) error {
		out = append(out, fs...)
		return nil
	})
	return out, err
}

// SharedPrefix returns how many leading chunks s shares with the stored
// lane l, which holds laneLen chunks ending at head. A new session's best
// base is the stored parent with the longest shared prefix.
func SharedPrefix(src LaneSource, l LaneRef, laneLen int, head session.ChunkID, s *session.Session) (int, error) {
	n := min(laneLen, s.Len())
	if n == 0 {
		return 0, nil
	}
	idAt := func(i int) (session.ChunkID, error) {
		fs, err := LaneFrames(src, l, i, i+1)
		if err != nil {
			return "", err
		}
		return fs[0].ID, nil
	}
	last := head
	if n < laneLen { // the lane is longer than s: compare at s's end
		var err error
		if last, err = idAt(n - 1); err != nil {
			return 0, err
		}
	}
	if s.Chunk(n-1).ID == last {
		return n, nil // the usual case: a fork or derivation of the whole parent
	}
	// An id covers its whole chain, so "same id at i" holds for a prefix.
	var ferr error
	k := sort.Search(n-1, func(i int) bool {
		id, err := idAt(i)
		if err != nil {
			ferr = err
			return true
		}
		return id != s.Chunk(i).ID
	})
	return k, ferr
}
