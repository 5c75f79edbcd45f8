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
	baseLane *int64
	baseLen  int
	compact  int // segments from here on are small and may be merged
	epoch    int64
	created  time.Time
	updated  time.Time
}

const laneColumns = `lane, id, lineage, status, head, len, base_lane, base_len, compact_from, epoch, created, updated`

// Row locks, appended to a lane query. A commit holds its session's row
// with noKeyUpdate (so forks may still key-share it); a commit creating a
// fork key-shares every lane of its base chain, which GC must lock forUpdate
// before it deletes or rewires one, so GC never pulls a base from under a
// fork being written. A fenced write holds its run's row forShare, which
// Advance's update waits for (see fence.go).
const (
	noLock      = ""
	keyShare    = " FOR KEY SHARE"
	forShare    = " FOR SHARE"
	noKeyUpdate = " FOR NO KEY UPDATE"
	forUpdate   = " FOR UPDATE"
)

func scanLane(row pgx.Row) (*lane, error) { return scanLaneWith(row) }

// scanLaneWith scans a row of laneColumns followed by columns of the
// caller's own into extra.
func scanLaneWith(row pgx.Row, extra ...any) (*lane, error) {
	var l lane
	var lin []byte
	dest := append([]any{&l.num, &l.id, &lin, &l.status, &l.head, &l.len, &l.baseLane, &l.baseLen, &l.compact, &l.epoch, &l.created, &l.updated}, extra...)
	if err := row.Scan(dest...); err != nil {
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

func (l *lane) ref() backend.LaneRef {
	r := backend.LaneRef{Num: l.num, BaseLen: l.baseLen}
	if l.baseLane != nil {
		r.HasBase, r.Base = true, *l.baseLane
	}
	return r
}

// source is the backend.LaneSource over one transaction; lock is applied to
// every base lane it reads.
type source struct {
	ctx  context.Context
	q    querier
	lock string
}

func (s source) Lane(num int64) (backend.LaneRef, error) {
	l, err := laneByNum(s.ctx, s.q, num, s.lock)
	if err != nil {
		return backend.LaneRef{}, err
	}
	return l.ref(), nil
}

// Segments reads, in one statement, the segment holding `from` (the last
// one starting at or before it) and those after it up to `to`, so that a
// compaction committing meanwhile cannot split the read between layouts.
func (s source) Segments(num int64, from, to int, fn func(first, n int, data []byte) error) error {
	rows, err := s.q.Query(s.ctx, `SELECT first, n, data FROM rath.segments
		WHERE lane = $1 AND first < $3 AND first >= (
			SELECT coalesce(max(first), 0) FROM rath.segments WHERE lane = $1 AND first <= $2)
		ORDER BY first`, num, from, to)
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
func frames(ctx context.Context, q querier, l *lane, from, to int, lock string) ([]backend.Frame, error) {
	return backend.LaneFrames(source{ctx, q, lock}, l.ref(), from, to)
}

// walk hands fn the encoded chunks [from, to) of a lane as they arrive.
func walk(ctx context.Context, q querier, l *lane, from, to int, lock string, fn func(at int, fs []backend.Frame) error) error {
	return backend.WalkLane(source{ctx, q, lock}, l.ref(), from, to, fn)
}

// ownFrames returns chunks [from, to) stored in lane num itself.
func ownFrames(ctx context.Context, q querier, num int64, from, to int) ([]backend.Frame, error) {
	return backend.LaneFrames(source{ctx, q, noLock}, backend.LaneRef{Num: num}, from, to)
}
