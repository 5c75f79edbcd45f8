package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// Commit implements store.Store. The usual commit, appending to a stored
// session whose head is prev, is one statement (see casAppend); anything
// else (a new session, a retry, a conflict) runs in a transaction that locks
// the session row and decides as the SQLite store does. A fenced commit
// (store.WithFence) takes the one statement too, with its fence checked
// in it; when the statement does not move the head, the transaction
// decides — and reports ErrFenced or ErrConflict.
func (s *Store) Commit(ctx context.Context, sess *session.Session, prev session.ChunkID) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("commit %s: %w", sess.ID(), err)
	}
	fence := fenceOf(ctx)
	if k := indexAfter(sess, prev); k > 0 && k < sess.Len() {
		ok, err := s.casAppend(ctx, sess, prev, k, fence)
		if err != nil {
			return fmt.Errorf("commit %s: %w", sess.ID(), err)
		}
		if ok {
			return nil
		}
	}
	err := s.write(ctx, func(tx pgx.Tx) error { return commitTx(ctx, tx, sess, prev, fence) })
	if err != nil {
		return fmt.Errorf("commit %s: %w", sess.ID(), err)
	}
	return nil
}

// indexAfter returns k such that chunk k-1 of sess is prev (0 if prev is
// empty or not in sess). Ids chain, so there is at most one such k; the
// search runs backwards because prev is usually near the end.
func indexAfter(sess *session.Session, prev session.ChunkID) int {
	if prev == "" {
		return 0
	}
	for i := sess.Len() - 1; i >= 0; i-- {
		if sess.Chunk(i).ID == prev {
			return i + 1
		}
	}
	return 0
}

// casAppend appends chunks [k, Len) of sess if and only if the stored head
// is prev at length k: a compare-and-swap in one statement (casBatchSQL),
// run in the committer's next batch. The UPDATE locks the row and, under
// READ COMMITTED, re-checks its condition against a concurrent winner's
// version, so two writers on one head cannot both succeed. It reports
// false, having changed nothing, when the stored head is anything else.
func (s *Store) casAppend(ctx context.Context, sess *session.Session, prev session.ChunkID, k int, fence *store.Fence) (bool, error) {
	rows, err := encodeRows(sess, k)
	if err != nil {
		return false, err
	}
	r := s.cas.do(ctx, casAppend{id: sess.ID(), head: sess.Head(), len: sess.Len(), prev: prev, prevLen: k, rows: rows, eventJSON: eventJSON(sess), fence: fence})
	if r.err != nil || !r.ok {
		return false, r.err
	}
	if sess.Len()-r.compactFrom >= compactAt {
		// Compaction only re-lays out committed chunks; if it fails (the
		// context ended, say) nothing is lost and the next commit retries
		// it, so the commit, which succeeded, reports success.
		_ = s.compactLane(ctx, r.lane)
	}
	return true, nil
}

// commitTx commits sess in tx. The fence, if any, is checked first: a
// fenced-out writer is refused even a retry of a commit stored before.
func commitTx(ctx context.Context, tx pgx.Tx, sess *session.Session, prev session.ChunkID, fence *store.Fence) error {
	if err := checkFence(ctx, tx, fence, sess.ID(), noKeyUpdate); err != nil {
		return err
	}
	if prev == "" {
		// A new session, usually: createTx inserts it, or finds it stored
		// (a retry, a race) and goes on as below.
		return createTx(ctx, tx, sess)
	}
	l, err := laneByID(ctx, tx, sess.ID(), noKeyUpdate)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: the session is not stored, but the commit expects head %s", store.ErrConflict, prev.Short())
	}
	if err != nil {
		return err
	}
	return extendTx(ctx, tx, l, sess, prev)
}

// extendTx moves the head of the locked lane l to sess.Head().
func extendTx(ctx context.Context, tx pgx.Tx, l *lane, sess *session.Session, prev session.ChunkID) error {
	switch {
	case l.head == sess.Head():
		return nil // committed before: a retry
	case l.head != prev:
		return fmt.Errorf("%w: stored head is %s, the commit expects %s", store.ErrConflict, l.head.Short(), prev.Short())
	case sess.Len() < l.len || (l.len > 0 && sess.Chunk(l.len-1).ID != l.head):
		return fmt.Errorf("%w: the session does not extend its stored head %s", store.ErrConflict, l.head.Short())
	}
	if err := writeChunks(ctx, tx, l.num, sess, l.len); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE rath.sessions SET head = $1, len = $2, updated = now() WHERE lane = $3
		RETURNING pg_notify('rath_commits', $4)`, sess.Head(), sess.Len(), l.num, eventJSON(sess)); err != nil {
		return err
	}
	if sess.Len()-l.compact >= compactAt {
		return compact(ctx, tx, l.num, l.compact, sess.Len())
	}
	return nil
}

func createTx(ctx context.Context, tx pgx.Tx, sess *session.Session) error {
	lin := sess.Lineage()
	baseLane, baseLen, err := findBase(ctx, tx, sess, lin.Parents)
	if err != nil {
		return err
	}
	linJSON, err := json.Marshal(lin)
	if err != nil {
		return err
	}
	var rows segRows
	if baseLen < sess.Len() {
		if rows, err = encodeRows(sess, baseLen); err != nil {
			return err
		}
	}
	// One statement inserts the row and its segments. ON CONFLICT DO
	// NOTHING: if another process creates the same session meanwhile, this
	// insert waits for its transaction and then inserts nothing; the
	// session is then an existing one, handled as such.
	var num int64
	err = tx.QueryRow(ctx, createSQL,
		sess.ID(), lin.Op, linJSON, store.StatusOpen, sess.Head(), sess.Len(), baseLane, baseLen, eventJSON(sess),
		rows.firsts, rows.ns, rows.datas).Scan(&num)
	if errors.Is(err, pgx.ErrNoRows) {
		l, err := laneByID(ctx, tx, sess.ID(), noKeyUpdate)
		if err != nil {
			return err
		}
		return extendTx(ctx, tx, l, sess, "")
	}
	if err != nil {
		return err
	}
	if len(lin.Parents) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO rath.parents(child, pos, parent)
			SELECT $1, p.pos - 1, p.parent FROM unnest($2::text[]) WITH ORDINALITY AS p(parent, pos)`,
			sess.ID(), lin.Parents); err != nil {
			return err
		}
	}
	if sc, ok := store.CreateScope(ctx); ok {
		born := sc.Labels()
		_, err := tx.Exec(ctx, `INSERT INTO rath.labels(id, key, value) VALUES($1, $2, $3), ($1, $4, $5)
			ON CONFLICT (id, key) DO UPDATE SET value = excluded.value`,
			sess.ID(), store.LabelTenant, born[store.LabelTenant], store.LabelProject, born[store.LabelProject])
		return err
	}
	if len(lin.Parents) > 0 {
		// A session is born in its first parent's scope.
		if _, err := tx.Exec(ctx, `INSERT INTO rath.labels(id, key, value)
			SELECT $1, key, value FROM rath.labels WHERE id = $2 AND key IN ($3, $4) ON CONFLICT DO NOTHING`,
			sess.ID(), lin.Parents[0], store.LabelTenant, store.LabelProject); err != nil {
			return err
		}
	}
	return nil
}

// createSQL inserts a new session's row and, in the same statement, the
// segment rows of its own chunks; it returns the lane, or no row if the
// session exists.
const createSQL = `WITH s AS (
		INSERT INTO rath.sessions(id, op, lineage, status, head, len, base_lane, base_len, compact_from, created, updated)
		VALUES($1, $2, $3, $4, $5, $6, $7, $8, $8, now(), now())
		ON CONFLICT (id) DO NOTHING
		RETURNING lane, pg_notify('rath_commits', $9) IS NULL),
	seg AS (
		INSERT INTO rath.segments(lane, first, n, data)
		SELECT s.lane, r.first, r.n, r.data FROM s, unnest($10::integer[], $11::integer[], $12::bytea[]) AS r(first, n, data))
	SELECT lane FROM s`

// findBase picks the stored parent sharing the longest prefix with sess. It
// key-shares every lane it reads, so GC cannot delete or rewire them before
// the new session, based on them, is committed.
func findBase(ctx context.Context, tx pgx.Tx, sess *session.Session, parents []session.ID) (*int64, int, error) {
	var stored []backend.StoredParent
	for _, p := range parents {
		pl, err := laneByID(ctx, tx, p, keyShare)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		stored = append(stored, backend.StoredParent{Ref: pl.ref(), Len: pl.len, Head: pl.head})
	}
	best, k, err := backend.BestBase(source{ctx, tx, keyShare}, sess, stored)
	if err != nil || best < 0 {
		return nil, 0, err
	}
	return &stored[best].Ref.Num, k, nil
}

// eventJSON is the pg_notify payload announcing the commit of sess.
func eventJSON(sess *session.Session) string {
	b, _ := json.Marshal(store.Event{ID: sess.ID(), Head: sess.Head(), Len: sess.Len()}) // cannot fail: strings and an int
	return string(b)
}
