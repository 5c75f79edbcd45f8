package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/internal/backend"
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

// bfs walks the graph with backend.Breadth inside one read transaction.
func bfs(tx *sql.Tx, start session.ID, next func(*sql.Tx, session.ID) ([]session.ID, error)) ([]session.ID, error) {
	return backend.Breadth(start,
		func(id session.ID) ([]session.ID, error) { return next(tx, id) },
		func(frontier []session.ID) (map[session.ID]bool, error) { return existing(tx, frontier) })
}

// existing reports which of ids are stored sessions, in one query.
func existing(tx *sql.Tx, frontier []session.ID) (map[session.ID]bool, error) {
	args := make([]any, len(frontier))
	for i, id := range frontier {
		args[i] = id
	}
	found, err := ids(tx, `SELECT id FROM sessions WHERE id IN (?`+strings.Repeat(",?", len(frontier)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	out := make(map[session.ID]bool, len(found))
	for _, id := range found {
		out[id] = true
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
