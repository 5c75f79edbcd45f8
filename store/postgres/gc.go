package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/store"
)

// GC implements store.Store. Victims are locked and removed newest lane
// first, so that when a victim is the base of a session that stays, the
// chunks the survivor still needs are copied into its own lane before the
// victim goes. The cutoff is taken on the server's clock, the one that
// stamped every session's update time, whichever process made it.
func (s *Store) GC(ctx context.Context, olderThan time.Duration, statuses ...store.Status) (store.GCStats, error) {
	var stats store.GCStats
	var sts []string
	for _, st := range store.GCStatuses(statuses...) {
		sts = append(sts, string(st))
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		stats = store.GCStats{}
		// FOR UPDATE waits for commits in flight on a victim and then
		// re-checks the condition: a session updated meanwhile is spared.
		rows, err := tx.Query(ctx, `SELECT `+laneColumns+` FROM rath.sessions
			WHERE status = ANY($1) AND updated < now() - $2 * interval '1 microsecond'
			ORDER BY lane DESC`+forUpdate, sts, olderThan.Microseconds())
		if err != nil {
			return err
		}
		victims, err := scanLanes(rows)
		if err != nil {
			return err
		}
		for _, v := range victims {
			kept, err := detachDependents(ctx, tx, v)
			if err != nil {
				return err
			}
			stats.Sessions++
			stats.Chunks += v.len - v.baseLen - kept
			if _, err := tx.Exec(ctx, `DELETE FROM rath.segments WHERE lane = $1`, v.num); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM rath.sessions WHERE lane = $1`, v.num); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM rath.parents WHERE child = $1`, v.id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM rath.labels WHERE id = $1`, v.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.GCStats{}, fmt.Errorf("gc: %w", err)
	}
	return stats, nil
}

// detachDependents rewires every session based on v's lane to v's own base,
// copying the chunks of v's lane it still needs. It returns how many of v's
// own chunks survive that way. Dependents are locked FOR UPDATE, which waits
// for any commit that is reading through them to create a fork.
func detachDependents(ctx context.Context, tx pgx.Tx, v *lane) (kept int, err error) {
	rows, err := tx.Query(ctx, `SELECT `+laneColumns+` FROM rath.sessions WHERE base_lane = $1 ORDER BY lane`+forUpdate, v.num)
	if err != nil {
		return 0, err
	}
	deps, err := scanLanes(rows)
	if err != nil {
		return 0, err
	}
	for _, d := range deps {
		need := d.baseLen // d uses v's chunks [0, need)
		if need > v.baseLen {
			fs, err := ownFrames(ctx, tx, v.num, v.baseLen, need)
			if err != nil {
				return 0, err
			}
			rows, err := packFrames(fs, v.baseLen)
			if err != nil {
				return 0, err
			}
			if err := writeRows(ctx, tx, d.num, rows); err != nil {
				return 0, err
			}
			kept = max(kept, need-v.baseLen)
		}
		if _, err := tx.Exec(ctx, `UPDATE rath.sessions SET base_lane = $1, base_len = $2 WHERE lane = $3`,
			v.baseLane, min(need, v.baseLen), d.num); err != nil {
			return 0, err
		}
	}
	return kept, nil
}
