package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier is what the lane helpers need: a transaction (or the pool).
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// maxRetries bounds how often write re-runs a transaction that the server
// aborted to break a deadlock or a serialization conflict.
const maxRetries = 5

// write runs fn in a READ COMMITTED transaction. Rows it depends on are
// locked explicitly (see commit.go and gc.go). A transaction PostgreSQL
// aborted as a deadlock victim is rolled back whole, so it is run again.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := s.check(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, fn)
		if attempt < maxRetries && retryable(err) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// read runs fn in a REPEATABLE READ, read-only transaction: every query sees
// the same snapshot, so a session read across its base lanes is consistent
// even while other processes commit, compact or collect.
func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := s.check(); err != nil {
		return err
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres store %s: %w", s.name, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// retryable reports a deadlock or serialization failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}
