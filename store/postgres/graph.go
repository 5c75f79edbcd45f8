package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/internal/backend"
)

// Parents implements store.Store.
func (s *Store) Parents(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx pgx.Tx) ([]session.ID, error) { return parentsOf(ctx, tx, id) })
}

// Children implements store.Store.
func (s *Store) Children(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx pgx.Tx) ([]session.ID, error) { return childrenOf(ctx, tx, id) })
}

// Ancestors implements store.Store: breadth first, nearest first. Sessions
// deleted by GC are skipped, but their recorded parents are still followed.
func (s *Store) Ancestors(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx pgx.Tx) ([]session.ID, error) { return bfs(ctx, tx, id, parentsOf) })
}

// Descendants implements store.Store: breadth first.
func (s *Store) Descendants(ctx context.Context, id session.ID) ([]session.ID, error) {
	return s.graph(ctx, id, func(tx pgx.Tx) ([]session.ID, error) { return bfs(ctx, tx, id, childrenOf) })
}

func (s *Store) graph(ctx context.Context, id session.ID, fn func(tx pgx.Tx) ([]session.ID, error)) ([]session.ID, error) {
	var out []session.ID
	err := s.read(ctx, func(tx pgx.Tx) error {
		if _, err := laneByID(ctx, tx, id, noLock); err != nil {
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

type neighbours func(ctx context.Context, tx pgx.Tx, id session.ID) ([]session.ID, error)

// bfs walks the graph with backend.Breadth inside one read transaction.
func bfs(ctx context.Context, tx pgx.Tx, start session.ID, next neighbours) ([]session.ID, error) {
	return backend.Breadth(start,
		func(id session.ID) ([]session.ID, error) { return next(ctx, tx, id) },
		func(frontier []session.ID) (map[session.ID]bool, error) { return existing(ctx, tx, frontier) })
}

// existing reports which of ids are stored sessions, in one query.
func existing(ctx context.Context, tx pgx.Tx, ids []session.ID) (map[session.ID]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = string(id)
	}
	found, err := idList(ctx, tx, `SELECT id FROM rath.sessions WHERE id = ANY($1)`, strs)
	if err != nil {
		return nil, err
	}
	out := make(map[session.ID]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

func parentsOf(ctx context.Context, tx pgx.Tx, id session.ID) ([]session.ID, error) {
	return idList(ctx, tx, `SELECT parent FROM rath.parents WHERE child = $1 ORDER BY pos`, id)
}

func childrenOf(ctx context.Context, tx pgx.Tx, id session.ID) ([]session.ID, error) {
	return idList(ctx, tx, `SELECT child FROM rath.parents WHERE parent = $1 ORDER BY child COLLATE "C"`, id)
}

func idList(ctx context.Context, tx pgx.Tx, q string, args ...any) ([]session.ID, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[session.ID])
}
