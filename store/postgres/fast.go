package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// One-statement forms of the small reads and writes a cluster makes many
// of per run. A statement outside a transaction is its own (implicit)
// transaction: one round trip where BEGIN, the fence check, the lock, the
// change and COMMIT were five or more. Each write's fast form changes
// nothing unless everything holds (the session exists, the fence holds,
// the move is allowed); otherwise the transactional form runs and says
// exactly what did not hold.

// infoSQL reads a session's row and its labels in one statement (one
// snapshot, as the read transaction gave).
const infoSQL = `SELECT ` + laneColumns + `,
	(SELECT json_object_agg(key, value) FROM rath.labels l WHERE l.id = s.id)
	FROM rath.sessions s WHERE s.id = $1`

func (s *Store) infoFast(ctx context.Context, id session.ID) (store.Info, error) {
	return scanInfo(s.pool.QueryRow(ctx, infoSQL, id), id)
}

// scanInfo reads infoSQL's row.
func scanInfo(row pgx.Row, id session.ID) (store.Info, error) {
	var lab []byte
	l, err := scanLaneWith(row, &lab)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Info{}, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Info{}, err
	}
	info := l.info()
	if lab != nil {
		if err := json.Unmarshal(lab, &info.Labels); err != nil {
			return store.Info{}, fmt.Errorf("session %s: stored labels are corrupt: %w", id, err)
		}
	}
	return info, nil
}

// fenceHolds is the condition, on session-row alias f's table, that the
// fence $2/$3 holds ($2 empty: no fence), checked under a share lock that
// an Advance's update waits for (see fence.go).
const fenceHolds = `($2 = '' OR EXISTS (SELECT 1 FROM rath.sessions f WHERE f.id = $2 AND f.epoch = $3 FOR SHARE OF f))`

// labelsSQL upserts and deletes a session's labels, key-sharing its row
// (so GC cannot delete it under them), if the fence holds, and then
// notifies watchers (labelNotify) with the head and length it read if $7
// (store.LabelEvents). It returns whether it changed them.
const labelsSQL = `WITH t AS (SELECT id, head, len FROM rath.sessions WHERE id = $1 FOR KEY SHARE),
	ok AS (SELECT 1 FROM t WHERE ` + fenceHolds + `),
	del AS (DELETE FROM rath.labels WHERE id = $1 AND key = ANY($4::text[]) AND EXISTS (SELECT 1 FROM ok)),
	ins AS (INSERT INTO rath.labels(id, key, value)
		SELECT $1, x.k, x.v FROM unnest($5::text[], $6::text[]) AS x(k, v) WHERE EXISTS (SELECT 1 FROM ok)
		ON CONFLICT (id, key) DO UPDATE SET value = excluded.value)
	SELECT EXISTS (SELECT 1 FROM ok), (SELECT ` + labelNotify + ` IS NULL FROM t AS a WHERE EXISTS (SELECT 1 FROM ok) AND $7)`

func (s *Store) labelsFast(ctx context.Context, id session.ID, labels map[string]string) (bool, error) {
	return labelsIn(ctx, s.pool, id, labels)
}

// labelsIn runs labelsSQL on q (the pool, or a transaction).
func labelsIn(ctx context.Context, q querier, id session.ID, labels map[string]string) (bool, error) {
	fid, epoch := fenceParams(ctx)
	var del, keys, vals []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if v := labels[k]; v == "" {
			del = append(del, k)
		} else {
			keys, vals = append(keys, k), append(vals, v)
		}
	}
	var ok bool
	err := q.QueryRow(ctx, labelsSQL, id, fid, epoch, del, keys, vals, store.LabelEvents(ctx)).Scan(&ok, nil)
	return ok, err
}

// statusSQL moves a session's status if it is one the move is allowed
// from and the fence holds. A session fenced by its own epoch checks it on
// the row it updates (a share lock and then an update of one row by two
// such writers would deadlock).
const statusSQL = `UPDATE rath.sessions s SET status = $4, updated = now()
	WHERE s.id = $1 AND s.status = ANY($5::text[])
		AND CASE WHEN $2 = s.id THEN s.epoch = $3 ELSE ` + fenceHolds + ` END
	RETURNING 1`

func (s *Store) statusFast(ctx context.Context, id session.ID, to store.Status) (bool, error) {
	return s.statusFrom(ctx, id, to, store.Sources(to))
}

// MoveTo implements store.Mover: store.MoveTo in one statement when the
// session is where a move to `to` starts from, else step by step (which
// leaves a session already at `to` alone, and says what did not hold).
func (s *Store) MoveTo(ctx context.Context, id session.ID, to store.Status) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("set status of %s: %w", id, err)
	}
	ok, err := s.statusFrom(ctx, id, to, store.MoveSources(to))
	if err != nil && !retryable(err) {
		return fmt.Errorf("set status of %s: %w", id, err)
	}
	if ok {
		return nil
	}
	return store.MoveSteps(ctx, s, id, to)
}

// statusFrom runs statusSQL: the move to `to` if the session's status is
// one of from.
func (s *Store) statusFrom(ctx context.Context, id session.ID, to store.Status, from []store.Status) (bool, error) {
	if len(from) == 0 || !to.Valid() {
		return false, nil
	}
	fid, epoch := fenceParams(ctx)
	srcs := make([]string, len(from))
	for i, st := range from {
		srcs[i] = string(st)
	}
	var one int
	err := s.pool.QueryRow(ctx, statusSQL, id, fid, epoch, to, srcs).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// fenceParams returns ctx's fence as statement parameters ("" if none).
func fenceParams(ctx context.Context) (string, int64) {
	if f := fenceOf(ctx); f != nil {
		return string(f.Session), f.Epoch
	}
	return "", 0
}

// loadSQL reads a session's row and every segment of its own lane in one
// statement (one snapshot). A session forked from a base reads its base
// lanes too, which loadFast leaves to the read transaction.
const loadSQL = `WITH s AS (SELECT ` + laneColumns + ` FROM rath.sessions WHERE id = $1)
	SELECT s.*, g.first, g.n, g.data FROM s
	LEFT JOIN rath.segments g ON g.lane = s.lane AND g.first < s.len
	ORDER BY g.first`

// segRow is one segment row as loadSQL returns it.
type segRow struct {
	first, n int
	data     []byte
}

// loaded serves a lane's segments from rows read before (backend.LaneSource
// for one base-less lane).
type loaded struct {
	num  int64
	rows []segRow
}

func (p loaded) Lane(num int64) (backend.LaneRef, error) {
	return backend.LaneRef{}, fmt.Errorf("lane %d: not read with lane %d", num, p.num)
}

func (p loaded) Segments(num int64, from, to int, fn func(first, n int, data []byte) error) error {
	if num != p.num {
		return fmt.Errorf("lane %d: not read with lane %d", num, p.num)
	}
	// As source.Segments: the segment holding `from`, and those after it
	// that start before `to`.
	start := 0
	for i, r := range p.rows {
		if r.first <= from {
			start = i
		}
	}
	for _, r := range p.rows[start:] {
		if r.first >= to {
			break
		}
		if err := fn(r.first, r.n, r.data); err != nil {
			return err
		}
	}
	return nil
}

// loadFast reads a whole session in one statement; ok is false (nothing
// read) when the session has base lanes.
func (s *Store) loadFast(ctx context.Context, id session.ID) (l *lane, cs []session.Chunk, ok bool, err error) {
	rows, err := s.pool.Query(ctx, loadSQL, id)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	var segs []segRow
	for rows.Next() {
		var first, n *int
		var data []byte
		r, err := scanLaneWith(rows, &first, &n, &data)
		if err != nil {
			return nil, nil, false, err
		}
		if l == nil {
			l = r
			if l.baseLen > 0 {
				return nil, nil, false, nil
			}
		}
		if first != nil && n != nil {
			segs = append(segs, segRow{*first, *n, data})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	if l == nil {
		return nil, nil, false, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	d := backend.NewDecoder(0, l.len)
	werr := backend.WalkLane(loaded{l.num, segs}, l.ref(), 0, l.len, d.Add)
	cs, derr := d.Wait()
	if werr != nil {
		return nil, nil, false, werr
	}
	if derr != nil {
		return nil, nil, false, derr
	}
	return l, cs, true, nil
}

// AdvanceInfo is Advance followed by Info, sent together: one round trip
// and one transaction. The update holds the session's row until the
// transaction ends, and the read that follows it takes a snapshot of its
// own (READ COMMITTED) after the update got the row: it sees every write a
// holder of the old epoch committed while the update waited for it. The
// returned Info carries the new epoch.
func (s *Store) AdvanceInfo(ctx context.Context, id session.ID) (store.Info, error) {
	if err := s.check(); err != nil {
		return store.Info{}, fmt.Errorf("advance %s: %w", id, err)
	}
	b := &pgx.Batch{}
	var epoch int64
	var info store.Info
	var ierr error
	b.Queue(`UPDATE rath.sessions SET epoch = epoch + 1 WHERE id = $1 RETURNING epoch`, id).QueryRow(func(row pgx.Row) error {
		return row.Scan(&epoch)
	})
	b.Queue(infoSQL, id).QueryRow(func(row pgx.Row) error {
		info, ierr = scanInfo(row, id)
		return ierr
	})
	err := s.pool.SendBatch(ctx, b).Close()
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Info{}, fmt.Errorf("advance %s: %w", id, err)
	}
	if info.Epoch != epoch {
		return store.Info{}, fmt.Errorf("advance %s: read epoch %d after advancing to %d", id, info.Epoch, epoch)
	}
	return info, nil
}
