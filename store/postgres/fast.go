package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
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
	var l lane
	var lin, lab []byte
	err := s.pool.QueryRow(ctx, infoSQL, id).Scan(&l.num, &l.id, &lin, &l.status, &l.head, &l.len, &l.baseLane, &l.baseLen, &l.compact, &l.epoch, &l.created, &l.updated, &lab)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Info{}, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Info{}, err
	}
	if err := json.Unmarshal(lin, &l.lineage); err != nil {
		return store.Info{}, fmt.Errorf("session %s: stored lineage is corrupt: %w", l.id, err)
	}
	l.created, l.updated = l.created.UTC(), l.updated.UTC()
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
// (so GC cannot delete it under them), if the fence holds. It returns
// whether it changed them.
const labelsSQL = `WITH t AS (SELECT id FROM rath.sessions WHERE id = $1 FOR KEY SHARE),
	ok AS (SELECT 1 FROM t WHERE ` + fenceHolds + `),
	del AS (DELETE FROM rath.labels WHERE id = $1 AND key = ANY($4::text[]) AND EXISTS (SELECT 1 FROM ok)),
	ins AS (INSERT INTO rath.labels(id, key, value)
		SELECT $1, x.k, x.v FROM unnest($5::text[], $6::text[]) AS x(k, v) WHERE EXISTS (SELECT 1 FROM ok)
		ON CONFLICT (id, key) DO UPDATE SET value = excluded.value)
	SELECT EXISTS (SELECT 1 FROM ok)`

func (s *Store) labelsFast(ctx context.Context, id session.ID, labels map[string]string) (bool, error) {
	return labelsIn(ctx, s.pool, id, labels)
}

// labelsIn runs labelsSQL on q (the pool, or a transaction).
func labelsIn(ctx context.Context, q querier, id session.ID, labels map[string]string) (bool, error) {
	fid, epoch := fenceParams(ctx)
	var del, keys, vals []string
	for _, k := range store.SortedKeys(labels) {
		if v := labels[k]; v == "" {
			del = append(del, k)
		} else {
			keys, vals = append(keys, k), append(vals, v)
		}
	}
	var ok bool
	err := q.QueryRow(ctx, labelsSQL, id, fid, epoch, del, keys, vals).Scan(&ok)
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
	from := store.Sources(to)
	if len(from) == 0 {
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
