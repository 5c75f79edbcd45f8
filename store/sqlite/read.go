package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, id session.ID) (*session.Session, error) {
	l, cs, err := s.readChunks(ctx, id, backend.All)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", id, err)
	}
	out, err := backend.Assembled(id, l.lineage, l.head, cs)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", id, err)
	}
	return out, nil
}

// Tail implements store.Store.
func (s *Store) Tail(ctx context.Context, id session.ID, n int) ([]session.Chunk, error) {
	_, cs, err := s.readChunks(ctx, id, backend.TailBounds(n))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", id, err)
	}
	return cs, nil
}

// Range implements store.Store.
func (s *Store) Range(ctx context.Context, id session.ID, from, to int) ([]session.Chunk, error) {
	_, cs, err := s.readChunks(ctx, id, backend.RangeBounds(from, to))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", id, err)
	}
	return cs, nil
}

// readChunks reads and decodes the chunks bounds picks, in one snapshot;
// rows are decoded on all cores while later rows are still being read.
func (s *Store) readChunks(ctx context.Context, id session.ID, bounds backend.Bounds) (*lane, []session.Chunk, error) {
	var l *lane
	var d *backend.Decoder
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		if l, err = laneByID(tx, id); err != nil {
			return err
		}
		from, to, err := bounds(l.len)
		if err != nil {
			return err
		}
		d = backend.NewDecoder(from, to)
		return backend.WalkLane(source{tx}, l.ref(), from, to, d.Add)
	})
	if d != nil {
		cs, derr := d.Wait() // always: decoding goroutines may still be running
		if err = errors.Join(err, derr); err == nil {
			return l, cs, nil
		}
	}
	return nil, nil, err
}

// whole reads a session's lane and all its encoded chunks in one snapshot.
func (s *Store) whole(ctx context.Context, id session.ID) (l *lane, fs []backend.Frame, err error) {
	err = s.read(ctx, func(tx *sql.Tx) error {
		if l, err = laneByID(tx, id); err != nil {
			return err
		}
		fs, err = frames(tx, l, 0, l.len)
		return err
	})
	return l, fs, err
}

// Info implements store.Store.
func (s *Store) Info(ctx context.Context, id session.ID) (store.Info, error) {
	var info store.Info
	err := s.read(ctx, func(tx *sql.Tx) error {
		l, err := laneByID(tx, id)
		if err != nil {
			return err
		}
		info = l.info()
		info.Labels, err = labels(tx, id)
		return err
	})
	if err != nil {
		return store.Info{}, fmt.Errorf("info %s: %w", id, err)
	}
	return info, nil
}

func (l *lane) info() store.Info {
	return store.Info{ID: l.id, Lineage: l.lineage, Status: l.status, Head: l.head, Len: l.len, Epoch: l.epoch, Created: l.created, Updated: l.updated}
}

func labels(q querier, id session.ID) (map[string]string, error) {
	rows, err := q.Query(`SELECT key, value FROM labels WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out map[string]string
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out, rows.Err()
}

// filterSQL is f as a WHERE clause ("" for none) and its arguments.
func filterSQL(f store.Filter) (string, []any) {
	var where []string
	var args []any
	if len(f.Status) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(",?", len(f.Status)-1)+")")
		for _, st := range f.Status {
			args = append(args, st)
		}
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created >= ?"), append(args, f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		where, args = append(where, "created < ?"), append(args, f.Until.UnixMicro())
	}
	if f.Op != "" {
		where, args = append(where, "op = ?"), append(args, f.Op)
	}
	if f.Parent != "" {
		where, args = append(where, "id IN (SELECT child FROM parents WHERE parent = ?)"), append(args, f.Parent)
	}
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		v := f.Labels[k]
		where, args = append(where, "id IN (SELECT id FROM labels WHERE key = ? AND value = ?)"), append(args, k, v)
	}
	if f.Scope != nil {
		for _, c := range scopeConds(*f.Scope) {
			where, args = append(where, c.sql), append(args, c.key, c.value)
		}
	}
	if len(where) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(where, " AND "), args
}

// scopeCond is one condition of a scope filter: the sessions whose label
// key is value, or, for DefaultScope, whose label key is missing or
// DefaultScope. Both forms are set lookups in labels_kv.
type scopeCond struct{ sql, key, value string }

func scopeConds(sc store.Scope) []scopeCond {
	cond := func(key, value string) scopeCond {
		if value == store.DefaultScope {
			return scopeCond{"id NOT IN (SELECT id FROM labels WHERE key = ? AND value <> ?)", key, value}
		}
		return scopeCond{"id IN (SELECT id FROM labels WHERE key = ? AND value = ?)", key, value}
	}
	t := sc.Tenant
	if t == "" {
		t = store.DefaultScope
	}
	out := []scopeCond{cond(store.LabelTenant, t)}
	if sc.Project != "" {
		out = append(out, cond(store.LabelProject, sc.Project))
	}
	return out
}

// Count implements store.Store.
func (s *Store) Count(ctx context.Context, f store.Filter) (int, error) {
	where, args := filterSQL(f)
	var n int
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM sessions`+where, args...).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Info, error) {
	where, args := filterSQL(f)
	q := `SELECT ` + laneColumns + ` FROM sessions` + where
	q += " ORDER BY created DESC, lane DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var out []store.Info
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.Query(q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			l, err := scanLane(rows)
			if err != nil {
				return err
			}
			out = append(out, l.info())
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range out {
			if out[i].Labels, err = labels(tx, out[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}
