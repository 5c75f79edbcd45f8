package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Fencing (see store.Fence). The epoch is a column of rath.sessions.
// Advance is one UPDATE, which takes the run's row lock; a fenced write
// reads the epoch with a row lock that conflicts with it, in the write's
// own transaction. So an Advance waits for the fenced writes in flight,
// and a fenced write that starts after an Advance waits for it and then
// reads the new epoch (READ COMMITTED re-reads a row that changed while
// it waited): no writer can commit under an epoch already superseded.

// Advance implements store.Store.
func (s *Store) Advance(ctx context.Context, id session.ID) (int64, error) {
	if err := s.check(); err != nil {
		return 0, fmt.Errorf("advance %s: %w", id, err)
	}
	var epoch int64
	var err error
	if f, cas := store.AdvanceFence(ctx, id); cas {
		// A compare-and-set: the row moves only from the fence's epoch.
		err = s.pool.QueryRow(ctx, `UPDATE rath.sessions SET epoch = epoch + 1 WHERE id = $1 AND epoch = $2 RETURNING epoch`, id, f.Epoch).Scan(&epoch)
		if errors.Is(err, pgx.ErrNoRows) {
			var cur int64
			if err = s.pool.QueryRow(ctx, `SELECT epoch FROM rath.sessions WHERE id = $1`, id).Scan(&cur); err == nil {
				err = f.Check(cur)
				if err == nil { // moved away and back cannot be: epochs only rise
					err = fmt.Errorf("%w: run %s did not move from epoch %d", store.ErrFenced, id, f.Epoch)
				}
			}
		}
	} else {
		err = s.pool.QueryRow(ctx, `UPDATE rath.sessions SET epoch = epoch + 1 WHERE id = $1 RETURNING epoch`, id).Scan(&epoch)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("advance %s: %w", id, err)
	}
	return epoch, nil
}

// Epoch implements store.Store.
func (s *Store) Epoch(ctx context.Context, id session.ID) (int64, error) {
	if err := s.check(); err != nil {
		return 0, fmt.Errorf("epoch of %s: %w", id, err)
	}
	var epoch int64
	err := s.pool.QueryRow(ctx, `SELECT epoch FROM rath.sessions WHERE id = $1`, id).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("epoch of %s: %w", id, err)
	}
	return epoch, nil
}

// fenceOf returns the fence ctx carries, nil if it carries none.
func fenceOf(ctx context.Context) *store.Fence {
	if f, ok := store.FenceFrom(ctx); ok {
		return &f
	}
	return nil
}

// checkFence fails with store.ErrFenced unless f is nil or f.Session's
// epoch is still f.Epoch, and holds the run's row until tx ends so that no
// Advance commits in between. The row is share-locked, so the many writers
// fenced by one run do not wait for each other — except when the write
// then locks that same row noKeyUpdate (a commit or a status change of the
// run's own session): it is locked so at once, since two share-lockers
// each upgrading would deadlock.
func checkFence(ctx context.Context, tx pgx.Tx, f *store.Fence, target session.ID, targetLock string) error {
	if f == nil {
		return nil
	}
	lock := forShare
	if f.Session == target && targetLock == noKeyUpdate {
		lock = noKeyUpdate
	}
	var epoch int64
	err := tx.QueryRow(ctx, `SELECT epoch FROM rath.sessions WHERE id = $1`+lock, f.Session).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return f.Missing()
	}
	if err != nil {
		return err
	}
	return f.Check(epoch)
}
