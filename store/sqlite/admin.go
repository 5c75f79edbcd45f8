package sqlite

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// SetStatus implements store.Store.
func (s *Store) SetStatus(ctx context.Context, id session.ID, to store.Status) error {
	fence := fenceOf(ctx)
	err := s.write(ctx, func(tx *wtx, _ *[]store.Event) error {
		if err := checkFence(tx, fence); err != nil {
			return err
		}
		l, err := laneByID(tx, id)
		if err != nil {
			return err
		}
		if err := store.CheckTransition(l.status, to); err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE sessions SET status = ?, updated = ? WHERE lane = ?`, to, time.Now().UnixMicro(), l.num)
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

// SetLabels implements store.Store: one transaction for them all. Once it
// commits, watchers get an event with Labels set, carrying the session's
// head and length (exact: the writer alone writes, and the job sees every
// earlier one's appends).
func (s *Store) SetLabels(ctx context.Context, id session.ID, labels map[string]string) error {
	fence := fenceOf(ctx)
	err := s.write(ctx, func(tx *wtx, evs *[]store.Event) error {
		if err := checkFence(tx, fence); err != nil {
			return err
		}
		l, err := laneByID(tx, id)
		if err != nil {
			return err
		}
		for _, key := range slices.Sorted(maps.Keys(labels)) {
			if value := labels[key]; value == "" {
				_, err = tx.Exec(`DELETE FROM labels WHERE id = ? AND key = ?`, id, key)
			} else {
				_, err = tx.Exec(`INSERT INTO labels(id, key, value) VALUES(?, ?, ?)
			ON CONFLICT(id, key) DO UPDATE SET value = excluded.value`, id, key, value)
			}
			if err != nil {
				return err
			}
		}
		*evs = append(*evs, store.Event{ID: id, Head: l.head, Len: l.len, Labels: true})
		return nil
	})
	if err != nil {
		return fmt.Errorf("label %s: %w", id, err)
	}
	return nil
}

// GC implements store.Store. Victims are removed newest lane first, so that
// when a victim is the base of a session that stays, the chunks the
// survivor still needs are copied into its own lane before the victim goes.
func (s *Store) GC(ctx context.Context, olderThan time.Duration, statuses ...store.Status) (store.GCStats, error) {
	var stats store.GCStats
	cutoff := time.Now().Add(-olderThan).UnixMicro()
	err := s.write(ctx, func(tx *wtx, _ *[]store.Event) error {
		tx.w.forget() // GC rewires and deletes sessions
		stats = store.GCStats{}
		var victims []*lane
		for _, st := range store.GCStatuses(statuses...) {
			rows, err := tx.Query(`SELECT `+laneColumns+` FROM sessions WHERE status = ? AND updated < ?`, st, cutoff)
			if err != nil {
				return err
			}
			for rows.Next() {
				l, err := scanLane(rows)
				if err != nil {
					rows.Close()
					return err
				}
				victims = append(victims, l)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		sortLanesDesc(victims)
		for _, v := range victims {
			kept, err := detachDependents(tx, v)
			if err != nil {
				return err
			}
			stats.Sessions++
			stats.Chunks += v.len - v.baseLen - kept
			for _, q := range []string{
				`DELETE FROM segments WHERE lane = ?`,
				`DELETE FROM sessions WHERE lane = ?`,
			} {
				if _, err := tx.Exec(q, v.num); err != nil {
					return err
				}
			}
			for _, q := range []string{`DELETE FROM parents WHERE child = ?`, `DELETE FROM labels WHERE id = ?`} {
				if _, err := tx.Exec(q, v.id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return store.GCStats{}, fmt.Errorf("gc: %w", err)
	}
	return stats, nil
}

func sortLanesDesc(ls []*lane) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].num > ls[j-1].num; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// detachDependents rewires every session based on v's lane to v's own base,
// copying the chunks of v's lane it still needs. It returns how many of v's
// own chunks survive that way.
func detachDependents(tx *wtx, v *lane) (kept int, err error) {
	rows, err := tx.Query(`SELECT `+laneColumns+` FROM sessions WHERE base_lane = ?`, v.num)
	if err != nil {
		return 0, err
	}
	var deps []*lane
	for rows.Next() {
		l, err := scanLane(rows)
		if err != nil {
			rows.Close()
			return 0, err
		}
		deps = append(deps, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, d := range deps {
		need := d.baseLen // d uses v's chunks [0, need)
		if need > v.baseLen {
			fs, err := ownFrames(tx, v.num, v.baseLen, need)
			if err != nil {
				return 0, err
			}
			data, err := segmentOf(fs)
			if err != nil {
				return 0, err
			}
			if _, err := tx.Exec(`INSERT INTO segments(lane, first, n, data) VALUES(?, ?, ?, ?)`, d.num, v.baseLen, len(fs), data); err != nil {
				return 0, err
			}
			kept = max(kept, need-v.baseLen)
		}
		if _, err := tx.Exec(`UPDATE sessions SET base_lane = ?, base_len = ? WHERE lane = ?`,
			v.baseLane, min(need, v.baseLen), d.num); err != nil {
			return 0, err
		}
	}
	return kept, nil
}

// segmentOf re-frames already encoded chunks without decoding them.
func segmentOf(fs []backend.Frame) ([]byte, error) {
	parts := make([][]byte, 0, len(fs))
	for _, f := range fs {
		p, err := backend.FrameSegment(f)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return backend.JoinSegments(parts), nil
}

// Verify implements store.Store: every stored chunk is re-hashed from its
// stored bytes, and the chain's links and head are checked.
func (s *Store) Verify(ctx context.Context, id session.ID) error {
	l, fs, err := s.whole(ctx, id)
	if err != nil {
		return fmt.Errorf("verify %s: %w", id, err)
	}
	if err := backend.VerifyFrames(fs, l.head); err != nil {
		return fmt.Errorf("verify %s: %w", id, err)
	}
	return nil
}
