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

// compactLocked locks lane num and compacts it if it still needs it (another
// process may have done it since the commit that asked).
func compactLocked(ctx context.Context, tx pgx.Tx, num int64) error {
	var from, to int
	err := tx.QueryRow(ctx, `SELECT compact_from, len FROM rath.sessions WHERE lane = $1`+noKeyUpdate, num).Scan(&from, &to)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // collected meanwhile
	}
	if err != nil || to-from < compactAt {
		return err
	}
	return compact(ctx, tx, num, from, to)
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
	if len(parts) > 1 {
		var fs []backend.Frame
		for _, p := range parts {
			pf, err := backend.DecodeSegment(p)
			if err != nil {
				return err
			}
			fs = append(fs, pf...)
		}
		packed, err := packFrames(fs, from)
		if err != nil {
			return err
		}
		// One large commit is already packed: rewrite only to save rows.
		if len(packed.datas) < len(parts) {
			if _, err := tx.Exec(ctx, `DELETE FROM rath.segments WHERE lane = $1 AND first >= $2 AND first < $3`, num, from, to); err != nil {
				return err
			}
			if err := writeRows(ctx, tx, num, packed); err != nil {
				return err
			}
		}
	}
	_, err = tx.Exec(ctx, `UPDATE rath.sessions SET compact_from = $1 WHERE lane = $2`, to, num)
	return err
}
