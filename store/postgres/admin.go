package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// SetStatus implements store.Store.
func (s *Store) SetStatus(ctx context.Context, id session.ID, to store.Status) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("set status of %s: %w", id, err)
	}
	if ok, err := s.statusFast(ctx, id, to); ok || err != nil && !retryable(err) {
		if err != nil {
			return fmt.Errorf("set status of %s: %w", id, err)
		}
		return nil
	}
	fence := fenceOf(ctx)
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := checkFence(ctx, tx, fence, id, noKeyUpdate); err != nil {
			return err
		}
		l, err := laneByID(ctx, tx, id, noKeyUpdate)
		if err != nil {
			return err
		}
		if err := store.CheckTransition(l.status, to); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE rath.sessions SET status = $1, updated = now() WHERE lane = $2`, to, l.num)
		return err
	})
	if err != nil {
		return fmt.Errorf("set status of %s: %w", id, err)
	}
	return nil
}

// SetLabel implements store.Store.
func (s *Store) SetLabel(ctx context.Context, id session.ID, key, value string) error {
	return s.SetLabels(ctx, id, map[string]string{key: value})
}

// SetLabels implements store.Store: one transaction for them all, which
// notifies watchers (labelNotify) as it commits under store.WithLabelEvents.
func (s *Store) SetLabels(ctx context.Context, id session.ID, labels map[string]string) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("label %s: %w", id, err)
	}
	if ok, err := s.labelsFast(ctx, id, labels); ok || err != nil && !retryable(err) {
		if err != nil {
			return fmt.Errorf("label %s: %w", id, err)
		}
		return nil
	}
	fence := fenceOf(ctx)
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := checkFence(ctx, tx, fence, id, keyShare); err != nil {
			return err
		}
		// Key-share the session so GC cannot delete it under the new label.
		if _, err := laneByID(ctx, tx, id, keyShare); err != nil {
			return err
		}
		for _, key := range slices.Sorted(maps.Keys(labels)) {
			var err error
			if value := labels[key]; value == "" {
				_, err = tx.Exec(ctx, `DELETE FROM rath.labels WHERE id = $1 AND key = $2`, id, key)
			} else {
				_, err = tx.Exec(ctx, `INSERT INTO rath.labels(id, key, value) VALUES($1, $2, $3)
			ON CONFLICT(id, key) DO UPDATE SET value = excluded.value`, id, key, value)
			}
			if err != nil {
				return err
			}
		}
		return notifyLabels(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("label %s: %w", id, err)
	}
	return nil
}

// notifyLabels announces, in tx, a label write of session id (labelNotify)
// if ctx asks for it (store.WithLabelEvents).
func notifyLabels(ctx context.Context, tx pgx.Tx, id session.ID) error {
	if !store.LabelEvents(ctx) {
		return nil
	}
	_, err := tx.Exec(ctx, `SELECT `+labelNotify+` FROM rath.sessions a WHERE a.id = $1`, id)
	return err
}

// Verify implements store.Store: every stored chunk is re-hashed from its
// stored bytes, and the chain's links and head are checked.
func (s *Store) Verify(ctx context.Context, id session.ID) error {
	var l *lane
	var fs []backend.Frame
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		if l, err = laneByID(ctx, tx, id, noLock); err != nil {
			return err
		}
		fs, err = frames(ctx, tx, l, 0, l.len, noLock)
		return err
	})
	if err != nil {
		return fmt.Errorf("verify %s: %w", id, err)
	}
	if err := backend.VerifyFrames(fs, l.head); err != nil {
		return fmt.Errorf("verify %s: %w", id, err)
	}
	return nil
}
