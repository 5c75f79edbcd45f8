package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/store/internal/backend"
)

// compactAt is how many chunks of small segments a lane accumulates before
// they are merged, so that loading a long session reads few rows.
const compactAt = 64

// compactLane compacts lane num if it still needs it (another process may
// have done it since the commit that asked). It is one transaction sent as
// two pipelines: BEGIN, the row lock and the read of the small segments in
// one round trip, the rewrite and COMMIT in the other, where a statement at
// a time took seven.
func (s *Store) compactLane(ctx context.Context, num int64) error {
	if err := s.check(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := s.compactOnce(ctx, num)
		if attempt < maxRetries && retryable(err) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

func (s *Store) compactOnce(ctx context.Context, num int64) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection given back inside a transaction (after an error) is
	// closed by the pool, which ends the transaction and its lock.
	defer c.Release()
	var from, to int
	var parts [][]byte
	locked := false
	read := &pgx.Batch{}
	read.Queue(`BEGIN`)
	read.Queue(`SELECT compact_from, len FROM rath.sessions WHERE lane = $1`+noKeyUpdate, num).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&from, &to)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // collected meanwhile
		}
		locked = err == nil
		return err
	})
	// A statement of its own, so that its snapshot is taken once the row is
	// locked: it sees every commit to the lane before the lock.
	read.Queue(`SELECT g.data FROM rath.segments g JOIN rath.sessions l ON l.lane = g.lane
		WHERE g.lane = $1 AND g.first >= l.compact_from AND g.first < l.len ORDER BY g.first`, num).Query(func(rows pgx.Rows) error {
		var err error
		parts, err = pgx.CollectRows(rows, pgx.RowTo[[]byte])
		return err
	})
	if err := c.SendBatch(ctx, read).Close(); err != nil {
		return err
	}
	write := &pgx.Batch{}
	if locked && to-from >= compactAt {
		rows, rewrite, err := repack(parts, from)
		if err != nil {
			return err
		}
		if rewrite {
			write.Queue(`DELETE FROM rath.segments WHERE lane = $1 AND first >= $2 AND first < $3`, num, from, to)
			write.Queue(insertRows, num, rows.firsts, rows.ns, rows.datas)
		}
		write.Queue(`UPDATE rath.sessions SET compact_from = $1 WHERE lane = $2`, to, num)
	}
	write.Queue(`COMMIT`)
	return c.SendBatch(ctx, write).Close()
}

// compact re-packs the lane's segments covering [from, to) into as few rows
// as segmentBytes allows. The caller holds the lane's row lock.
func compact(ctx context.Context, tx pgx.Tx, num int64, from, to int) error {
	rows, err := tx.Query(ctx, `SELECT data FROM rath.segments WHERE lane = $1 AND first >= $2 AND first < $3 ORDER BY first`, num, from, to)
	if err != nil {
		return err
	}
	parts, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return err
	}
	packed, rewrite, err := repack(parts, from)
	if err != nil {
		return err
	}
	if rewrite {
		if _, err := tx.Exec(ctx, `DELETE FROM rath.segments WHERE lane = $1 AND first >= $2 AND first < $3`, num, from, to); err != nil {
			return err
		}
		if err := writeRows(ctx, tx, num, packed); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, `UPDATE rath.sessions SET compact_from = $1 WHERE lane = $2`, to, num)
	return err
}

// repack packs segment rows, the first starting at chunk from, into as few
// rows as segmentBytes allows; rewrite is false when that saves no row (one
// large commit is already packed).
func repack(parts [][]byte, from int) (rows segRows, rewrite bool, err error) {
	if len(parts) < 2 {
		return segRows{}, false, nil
	}
	var fs []backend.Frame
	for _, p := range parts {
		pf, err := backend.DecodeSegment(p)
		if err != nil {
			return segRows{}, false, err
		}
		fs = append(fs, pf...)
	}
	packed, err := packFrames(fs, from)
	if err != nil {
		return segRows{}, false, err
	}
	return packed, len(packed.datas) < len(parts), nil
}
