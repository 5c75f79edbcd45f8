package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A lane is a session's row: its own chunks are stored in segments under the
// lane's number; the first baseLen chunks belong to its base lane (the
// parent it was forked from), recursively. A fork therefore writes only its
// suffix.
type lane struct {
	num      int64
	id       session.ID
	lineage  session.Lineage
	status   store.Status
	head     session.ChunkID
	len      int
	baseLane *int64
	baseLen  int
	compact  int // segments from here on are small and may be merged
	created  time.Time
	updated  time.Time
}

const laneColumns = `lane, id, lineage, status, head, len, base_lane, base_len, compact_from, created, updated`

// Row locks, appended to a lane query. A commit holds its session's row
// with noKeyUpdate (so forks may still key-share it); a commit creating a
// fork key-shares every lane of its base chain, which GC must lock forUpdate
// before it deletes or rewires one, so GC never pulls a base from under a
// fork being written.
const (
	noLock      = ""
	keyShare    = " FOR KEY SHARE"
	noKeyUpdate = " FOR NO KEY UPDATE"
	forUpdate   = " FOR UPDATE"
)

func scanLane(row pgx.Row) (*lane, error) {
	var l lane
	var lin []byte
	if err := row.Scan(&l.num, &l.id, &lin, &l.status, &l.head, &l.len, &l.baseLane, &l.baseLen, &l.compact, &l.created, &l.updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(lin, &l.lineage); err != nil {
		return nil, fmt.Errorf("session %s: stored lineage is corrupt: %w", l.id, err)
	}
	l.created, l.updated = l.created.UTC(), l.updated.UTC()
	return &l, nil
}

func scanLanes(rows pgx.Rows) ([]*lane, error) {
	defer rows.Close()
	var out []*lane
	for rows.Next() {
		l, err := scanLane(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// laneByID returns the lane of a session, or ErrNotFound.
func laneByID(ctx context.Context, q querier, id session.ID, lock string) (*lane, error) {
	l, err := scanLane(q.QueryRow(ctx, `SELECT `+laneColumns+` FROM rath.sessions WHERE id = $1`+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	return l, err
}

func laneByNum(ctx context.Context, q querier, num int64, lock string) (*lane, error) {
	l, err := scanLane(q.QueryRow(ctx, `SELECT `+laneColumns+` FROM rath.sessions WHERE lane = $1`+lock, num))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("lane %d is missing (corrupt database?)", num)
	}
	return l, err
}

// frames returns the encoded chunks [from, to) of a lane, following its
// base lanes for the shared prefix; lock is applied to each base lane read.
func frames(ctx context.Context, q querier, l *lane, from, to int, lock string) ([]store.Frame, error) {
	out := make([]store.Frame, 0, max(to-from, 0))
	err := walk(ctx, q, l, from, to, lock, func(_ int, fs []store.Frame) error {
		out = append(out, fs...)
		return nil
	})
	return out, err
}

// walk reads the encoded chunks [from, to) of a lane in order, base lanes
// first, handing fn each segment row's share as it arrives: fs[0] is chunk
// at of the session.
func walk(ctx context.Context, q querier, l *lane, from, to int, lock string, fn func(at int, fs []store.Frame) error) error {
	if from >= to {
		return nil
	}
	if from < l.baseLen {
		if l.baseLane == nil {
			return fmt.Errorf("lane %d has %d base chunks but no base lane (corrupt database?)", l.num, l.baseLen)
		}
		base, err := laneByNum(ctx, q, *l.baseLane, lock)
		if err != nil {
			return err
		}
		if err := walk(ctx, q, base, from, min(to, l.baseLen), lock, fn); err != nil {
			return err
		}
	}
	return ownRows(ctx, q, l.num, max(from, l.baseLen), to, fn)
}

// ownFrames returns chunks [from, to) stored in the lane itself.
func ownFrames(ctx context.Context, q querier, num int64, from, to int) ([]store.Frame, error) {
	out := make([]store.Frame, 0, max(to-from, 0))
	err := ownRows(ctx, q, num, from, to, func(_ int, fs []store.Frame) error {
		out = append(out, fs...)
		return nil
	})
	return out, err
}

// ownRows reads chunks [from, to) stored in the lane itself: the segment
// holding `from` (the last one starting at or before it) and those after it
// up to `to`, in one statement, so that a compaction committing meanwhile
// cannot split the read between two layouts.
func ownRows(ctx context.Context, q querier, num int64, from, to int, fn func(at int, fs []store.Frame) error) error {
	if from >= to {
		return nil
	}
	rows, err := q.Query(ctx, `SELECT first, n, data FROM rath.segments
		WHERE lane = $1 AND first < $3 AND first >= (
			SELECT coalesce(max(first), 0) FROM rath.segments WHERE lane = $1 AND first <= $2)
		ORDER BY first`, num, from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	next := from // the next chunk expected
	for rows.Next() {
		var first, n int
		var data []byte
		if err := rows.Scan(&first, &n, &data); err != nil {
			return err
		}
		fs, err := store.DecodeSegment(data)
		if err != nil {
			return fmt.Errorf("lane %d segment at %d: %w", num, first, err)
		}
		if len(fs) != n {
			return fmt.Errorf("lane %d segment at %d holds %d chunks, row says %d (corrupt database?)", num, first, len(fs), n)
		}
		lo, hi := max(from-first, 0), min(to-first, n)
		if lo >= hi {
			continue
		}
		if first+lo != next {
			break // a gap: reported below
		}
		if err := fn(next, fs[lo:hi]); err != nil {
			return err
		}
		next += hi - lo
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if next != to {
		return fmt.Errorf("lane %d: found %d of chunks [%d,%d) (corrupt database?)", num, next-from, from, to)
	}
	return nil
}
