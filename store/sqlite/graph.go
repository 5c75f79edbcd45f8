package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/openrath/rath/session"
)

// Parents implements store.Store.
func (s *Store) Parents(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx *sql.Tx) ([]session.ID, error) { return parentsOf(tx, id) })
}

// Children implements store.Store.
func (s *Store) Children(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx *sql.Tx) ([]session.ID, error) { return childrenOf(tx, id) })
}

// Ancestors implements store.Store: breadth first, nearest first. Sessions
// deleted by GC are skipped, but their recorded parents are still followed.
func (s *Store) Ancestors(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx *sql.Tx) ([]session.ID, error) { return bfs(tx, id, parentsOf) })
}

// Descendants implements store.Store: breadth first.
func (s *Store) Descendants(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx *sql.Tx) ([]session.ID, error) { return bfs(tx, id, childrenOf) })
}

func (s *Store) graph(ctx context.Context, id session.ID, fn func(tx *sql.Tx) ([]session.ID, error)) ([]session.ID, error) {
	var out []session.ID
	err := s.read(ctx, func(tx *sql.Tx) error {
		if _, err := laneByID(tx, id); err != nil {
			return err
		}
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lineage of %s: %w", id, err)
	}
	return out, nil
}

func bfs(tx *sql.Tx, start session.ID, next func(*sql.Tx, session.ID) ([]session.ID, error)) ([]session.ID, error) {
	seen := map[session.ID]bool{start: true}
	var out []session.ID
	for frontier := []session.ID{start}; len(frontier) > 0; {
		var nextFrontier []session.ID
		for _, id := range frontier {
			ns, err := next(tx, id)
			if err != nil {
				return nil, err
			}
			for _, n := range ns {
				if !seen[n] {
					seen[n] = true
					nextFrontier = append(nextFrontier, n)
				}
			}
		}
		for _, n := range nextFrontier {
			var exists bool
			if err := tx.QueryRow(`SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?)`, n).Scan(&exists); err != nil {
				return nil, err
			}
			if exists {
				out = append(out, n)
			}
		}
		frontier = nextFrontier
	}
	return out, nil
}

func parentsOf(tx *sql.Tx, id session.ID) ([]session.ID, error) {
	return ids(tx, `SELECT parent FROM parents WHERE child = ? ORDER BY pos`, id)
}

func childrenOf(tx *sql.Tx, id session.ID) ([]session.ID, error) {
	return ids(tx, `SELECT child FROM parents WHERE parent = ? ORDER BY child`, id)
}

func ids(tx *sql.Tx, q string, args ...any) ([]session.ID, error) {
	rows, err := tx.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session.ID
	for rows.Next() {
		var id session.ID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
