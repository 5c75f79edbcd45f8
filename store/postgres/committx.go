package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Pool returns the store's connection pool, for a caller that writes rows
// of its own in the store's database (see CommitTx). Its connections carry
// the store's durability (synchronous_commit). The store owns the pool:
// Close closes it.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// CommitTx is Commit inside the caller's transaction tx: the same checks
// (the head's compare-and-swap, the fence ctx carries) and the same writes,
// so that a caller can commit a session and insert rows of its own (a job
// queue's, say) atomically. The caller commits or rolls back tx; nothing
// is visible, and no Watch event fires, until tx commits.
//
// tx should be READ COMMITTED (pgx's default): under a stricter isolation
// level a concurrent commit to the same session fails tx with a
// serialization error. CommitTx locks the session's row (and, if fenced,
// share-locks the run's) until tx ends, so keep tx short. An error
// wrapping store.ErrConflict (ErrFenced included) is decided before any
// write and leaves tx usable; any other error may have aborted tx (a
// failed statement aborts a PostgreSQL transaction): roll it back.
// Commit retries a transaction the server aborted to break a deadlock;
// CommitTx cannot, since tx is the caller's.
func (s *Store) CommitTx(ctx context.Context, tx pgx.Tx, sess *session.Session, prev session.ChunkID) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("commit %s: %w", sess.ID(), err)
	}
	if err := commitTx(ctx, tx, sess, prev, fenceOf(ctx)); err != nil {
		return fmt.Errorf("commit %s: %w", sess.ID(), err)
	}
	return nil
}

// SetLabelsTx is SetLabels inside the caller's transaction tx (the fence
// ctx carries included), so that a caller can label a session it commits
// in tx, or label one with rows of its own, atomically. It fails with
// store.ErrNotFound if the session is not there (as tx sees it) and with
// an error wrapping store.ErrFenced if the fence does not hold; tx is
// usable after either. Under store.WithLabelEvents watchers get its event
// (Labels set) when tx commits, and none if it rolls back.
func (s *Store) SetLabelsTx(ctx context.Context, tx pgx.Tx, id session.ID, labels map[string]string) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("label %s: %w", id, err)
	}
	ok, err := labelsIn(ctx, tx, id, labels)
	if err != nil {
		return fmt.Errorf("label %s: %w", id, err)
	}
	if ok {
		return nil
	}
	if _, err := laneByID(ctx, tx, id, noLock); err != nil {
		return fmt.Errorf("label %s: %w", id, err)
	}
	if err := checkFence(ctx, tx, fenceOf(ctx), id, forShare); err != nil {
		return fmt.Errorf("label %s: %w", id, err)
	}
	err = errors.New("the labels were not written")
	return fmt.Errorf("label %s: %w", id, err)
}

// SetManyLabelsTx sets labels on many sessions in one statement inside
// the caller's transaction tx (key-sharing each session's row, as
// SetLabels does). It takes no fence. It fails with store.ErrNotFound,
// naming one, if any of the sessions is not there as tx sees it; nothing
// is written then, and tx stays usable. Under store.WithLabelEvents
// watchers get an event (Labels set) for each session named when tx
// commits, and none if it rolls back.
func (s *Store) SetManyLabelsTx(ctx context.Context, tx pgx.Tx, labels map[session.ID]map[string]string) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("label sessions: %w", err)
	}
	if fenceOf(ctx) != nil {
		return fmt.Errorf("label sessions: SetManyLabelsTx takes no fence")
	}
	var ids, keys, vals, delIDs, delKeys []string
	for _, id := range slices.Sorted(maps.Keys(labels)) {
		for _, k := range slices.Sorted(maps.Keys(labels[id])) {
			if v := labels[id][k]; v == "" {
				delIDs, delKeys = append(delIDs, string(id)), append(delKeys, k)
			} else {
				ids, keys, vals = append(ids, string(id)), append(keys, k), append(vals, v)
			}
		}
	}
	all := make([]string, 0, len(labels))
	for id := range labels {
		all = append(all, string(id))
	}
	var missing *string
	err := tx.QueryRow(ctx, manyLabelsSQL, all, ids, keys, vals, delIDs, delKeys, store.LabelEvents(ctx)).Scan(&missing, nil)
	if err != nil {
		return fmt.Errorf("label sessions: %w", err)
	}
	if missing != nil {
		return fmt.Errorf("label sessions: session %s: %w", *missing, store.ErrNotFound)
	}
	return nil
}

// manyLabelsSQL upserts and deletes labels of many sessions if all of them
// exist (key-sharing their rows), notifying watchers of each (labelNotify)
// if $7 (store.LabelEvents), and returns one that does not, if any.
const manyLabelsSQL = `WITH t AS (SELECT id, head, len FROM rath.sessions WHERE id = ANY($1::text[]) ORDER BY id FOR KEY SHARE),
	gone AS (SELECT a.id FROM unnest($1::text[]) AS a(id) WHERE a.id NOT IN (SELECT id FROM t) LIMIT 1),
	del AS (DELETE FROM rath.labels l USING unnest($5::text[], $6::text[]) AS d(id, k)
		WHERE l.id = d.id AND l.key = d.k AND NOT EXISTS (SELECT 1 FROM gone)),
	ins AS (INSERT INTO rath.labels(id, key, value)
		SELECT x.id, x.k, x.v FROM unnest($2::text[], $3::text[], $4::text[]) AS x(id, k, v) WHERE NOT EXISTS (SELECT 1 FROM gone)
		ON CONFLICT (id, key) DO UPDATE SET value = excluded.value)
	SELECT (SELECT id FROM gone), (SELECT count(` + labelNotify + ` IS NULL) FROM t AS a WHERE NOT EXISTS (SELECT 1 FROM gone) AND $7)`
