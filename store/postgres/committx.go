package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/openrath/rath/session"
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
// usable after either.
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
	f := fenceOf(ctx)
	if f == nil {
		return fmt.Errorf("label %s: the labels were not written", id)
	}
	var epoch int64
	err = tx.QueryRow(ctx, `SELECT epoch FROM rath.sessions WHERE id = $1`, f.Session).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("label %s: %w", id, f.Missing())
	}
	if err == nil {
		err = f.Check(epoch)
	}
	return fmt.Errorf("label %s: %w", id, err)
}
