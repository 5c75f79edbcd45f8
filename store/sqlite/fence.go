package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Fencing (see store.Fence). The epoch is a column of the sessions table.
// It is never cached: a fenced write reads it inside the writer's
// transaction, which holds SQLite's write lock, so no other job or process
// can advance it between the check and the write.

const selectEpoch = `SELECT epoch FROM sessions WHERE id = ?`

// Advance implements store.Store.
func (s *Store) Advance(ctx context.Context, id session.ID) (int64, error) {
	var epoch int64
	f, cas := store.AdvanceFence(ctx, id)
	err := s.write(ctx, func(tx *wtx, _ *[]store.Event) error {
		if cas {
			// A compare-and-set: the write lock held, the epoch read here
			// is the one the update moves.
			var cur int64
			err := tx.QueryRow(selectEpoch, id).Scan(&cur)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("session %s: %w", id, store.ErrNotFound)
			}
			if err != nil {
				return err
			}
			if err := f.Check(cur); err != nil {
				return err
			}
		}
		err := tx.QueryRow(`UPDATE sessions SET epoch = epoch + 1 WHERE id = ? RETURNING epoch`, id).Scan(&epoch)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %s: %w", id, store.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("advance %s: %w", id, err)
	}
	return epoch, nil
}

// Epoch implements store.Store.
func (s *Store) Epoch(ctx context.Context, id session.ID) (int64, error) {
	var epoch int64
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRow(selectEpoch, id).Scan(&epoch)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %s: %w", id, store.ErrNotFound)
		}
		return err
	})
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
// stored epoch is still f.Epoch. It only reads, so a fenced-out job fails
// alone; a read error is returned as is (a light job aborts on it).
func checkFence(tx *wtx, f *store.Fence) error {
	if f == nil {
		return nil
	}
	var epoch int64
	err := tx.QueryRow(selectEpoch, f.Session).Scan(&epoch)
	if errors.Is(err, sql.ErrNoRows) {
		return f.Missing()
	}
	if err != nil {
		return err
	}
	return f.Check(epoch)
}
