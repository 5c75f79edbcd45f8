package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
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
	epoch    int64
	created  time.Time
	updated  time.Time
}

const laneColumns = `lane, id, lineage, status, head, len, base_lane, base_len, compact_from, epoch, created, updated`

type scanner interface{ Scan(dest ...any) error }

func scanLane(row scanner) (*lane, error) {
	var l lane
	var lin string
	var created, updated int64
	if err := row.Scan(&l.num, &l.id, &lin, &l.status, &l.head, &l.len, &l.baseLane, &l.baseLen, &l.compact, &l.epoch, &created, &updated); err != nil {
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

func (l *lane) ref() backend.LaneRef {
	return backend.LaneRef{Num: l.num, HasBase: l.baseLane.Valid, Base: l.baseLane.Int64, BaseLen: l.baseLen}
}

// source is the backend.LaneSource over one transaction.
type source struct{ q querier }

func (s source) Lane(num int64) (backend.LaneRef, error) {
	l, err := laneByNum(s.q, num)
	if err != nil {
		return backend.LaneRef{}, err
	}
	return l.ref(), nil
}

func (s source) Segments(num int64, from, to int, fn func(first, n int, data []byte) error) error {
	// The segment holding `from` starts at or before it.
	var start sql.NullInt64
	if err := s.q.QueryRow(`SELECT max(first) FROM segments WHERE lane = ? AND first <= ?`, num, from).Scan(&start); err != nil {
		return err
	}
	rows, err := s.q.Query(`SELECT first, n, data FROM segments WHERE lane = ? AND first >= ? AND first < ? ORDER BY first`,
		num, start.Int64, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var first, n int
		var data []byte
		if err := rows.Scan(&first, &n, &data); err != nil {
			return err
		}
		if err := fn(first, n, data); err != nil {
			return err
		}
	}
	return rows.Err()
}

// frames returns the encoded chunks [from, to) of a session's lane.
func frames(q querier, l *lane, from, to int) ([]backend.Frame, error) {
	return backend.LaneFrames(source{q}, l.ref(), from, to)
}

// ownFrames returns chunks [from, to) stored in lane num itself.
func ownFrames(q querier, num int64, from, to int) ([]backend.Frame, error) {
	return backend.LaneFrames(source{q}, backend.LaneRef{Num: num}, from, to)
}
