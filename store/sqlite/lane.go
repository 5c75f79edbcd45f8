package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
	baseLane sql.NullInt64
	baseLen  int
	compact  int // segments from here on are small and may be merged
	created  time.Time
	updated  time.Time
}

const laneColumns = `lane, id, lineage, status, head, len, base_lane, base_len, compact_from, created, updated`

type scanner interface{ Scan(dest ...any) error }

func scanLane(row scanner) (*lane, error) {
	var l lane
	var lin string
	var created, updated int64
	if err := row.Scan(&l.num, &l.id, &lin, &l.status, &l.head, &l.len, &l.baseLane, &l.baseLen, &l.compact, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(lin), &l.lineage); err != nil {
		return nil, fmt.Errorf("session %s: stored lineage is corrupt: %w", l.id, err)
	}
	l.created, l.updated = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return &l, nil
}

type querier interface {
	QueryRow(query string, args ...any) *sql.Row
	Query(query string, args ...any) (*sql.Rows, error)
}

// laneByID returns the lane of a session, or ErrNotFound.
func laneByID(q querier, id session.ID) (*lane, error) {
	l, err := scanLane(q.QueryRow(`SELECT `+laneColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	return l, err
}

func laneByNum(q querier, num int64) (*lane, error) {
	l, err := scanLane(q.QueryRow(`SELECT `+laneColumns+` FROM sessions WHERE lane = ?`, num))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("lane %d is missing (corrupt database?)", num)
	}
	return l, err
}

// frames returns the encoded chunks [from, to) of a lane, following its
// base lanes for the shared prefix.
func frames(q querier, l *lane, from, to int) ([]store.Frame, error) {
	if from >= to {
		return nil, nil
	}
	var out []store.Frame
	if from < l.baseLen {
		base, err := laneByNum(q, l.baseLane.Int64)
		if err != nil {
			return nil, err
		}
		if out, err = frames(q, base, from, min(to, l.baseLen)); err != nil {
			return nil, err
		}
	}
	own, err := ownFrames(q, l.num, max(from, l.baseLen), to)
	if err != nil {
		return nil, err
	}
	return append(out, own...), nil
}

// ownFrames reads chunks [from, to) stored in the lane itself.
func ownFrames(q querier, num int64, from, to int) ([]store.Frame, error) {
	if from >= to {
		return nil, nil
	}
	// The segment holding `from` starts at or before it.
	var start sql.NullInt64
	if err := q.QueryRow(`SELECT max(first) FROM segments WHERE lane = ? AND first <= ?`, num, from).Scan(&start); err != nil {
		return nil, err
	}
	rows, err := q.Query(`SELECT first, n, data FROM segments WHERE lane = ? AND first >= ? AND first < ? ORDER BY first`,
		num, start.Int64, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]store.Frame, 0, to-from)
	for rows.Next() {
		var first, n int
		var data []byte
		if err := rows.Scan(&first, &n, &data); err != nil {
			return nil, err
		}
		fs, err := store.DecodeSegment(data)
		if err != nil {
			return nil, fmt.Errorf("lane %d segment at %d: %w", num, first, err)
		}
		if len(fs) != n {
			return nil, fmt.Errorf("lane %d segment at %d holds %d chunks, row says %d (corrupt database?)", num, first, len(fs), n)
		}
		lo, hi := max(from-first, 0), min(to-first, n)
		if lo < hi {
			out = append(out, fs[lo:hi]...)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) != to-from {
		return nil, fmt.Errorf("lane %d: found %d of chunks [%d,%d) (corrupt database?)", num, len(out), from, to)
	}
	return out, nil
}
