package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, id session.ID) (*session.Session, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("load %s: %w", id, err)
	}
	l, cs, ok, err := s.loadFast(ctx, id)
	if err == nil && !ok {
		l, cs, err = s.readChunks(ctx, id, backend.All)
	}
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

// readChunks reads and decodes the chunks [from, to) that bounds picks
// given the session's length, in one snapshot, decoding rows as they come.
func (s *Store) readChunks(ctx context.Context, id session.ID, bounds backend.Bounds) (*lane, []session.Chunk, error) {
	var l *lane
	var d *backend.Decoder
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		if l, err = laneByID(ctx, tx, id, noLock); err != nil {
			return err
		}
		from, to, err := bounds(l.len)
		if err != nil {
			return err
		}
		d = backend.NewDecoder(from, to)
		return walk(ctx, tx, l, from, to, noLock, d.Add)
	})
	if d == nil {
		return nil, nil, err
	}
	cs, derr := d.Wait() // always: decoding goroutines may still be running
	if err != nil {
		return nil, nil, err
	}
	return l, cs, derr
}

// Info implements store.Store.
func (s *Store) Info(ctx context.Context, id session.ID) (store.Info, error) {
	if err := s.check(); err != nil {
		return store.Info{}, fmt.Errorf("info %s: %w", id, err)
	}
	info, err := s.infoFast(ctx, id)
	if err != nil {
		return store.Info{}, fmt.Errorf("info %s: %w", id, err)
	}
	return info, nil
}

func (l *lane) info() store.Info {
	return store.Info{ID: l.id, Lineage: l.lineage, Status: l.status, Head: l.head, Len: l.len, Epoch: l.epoch, Created: l.created, Updated: l.updated}
}

// filterSQL is f as a WHERE clause ("" for none) and its arguments.
func filterSQL(f store.Filter) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if len(f.Status) > 0 {
		sts := make([]string, len(f.Status))
		for i, st := range f.Status {
			sts[i] = string(st)
		}
		where = append(where, "status = ANY("+arg(sts)+")")
	}
	if !f.Since.IsZero() {
		where = append(where, "created >= "+arg(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "created < "+arg(f.Until))
	}
	if f.Op != "" {
		where = append(where, "op = "+arg(f.Op))
	}
	if f.Parent != "" {
		where = append(where, "id IN (SELECT child FROM rath.parents WHERE parent = "+arg(f.Parent)+")")
	}
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		v := f.Labels[k]
		short := "" // the partial index's predicate, when v is in it
		if len([]rune(v)) <= shortLabelLen {
			short = " AND length(value) <= " + shortLabel
		}
		where = append(where, "id IN (SELECT id FROM rath.labels WHERE key = "+arg(k)+" AND value = "+arg(v)+short+")")
	}
	if f.Scope != nil {
		where = append(where, scopeSQL(*f.Scope, arg)...)
	}
	if len(where) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(where, " AND "), args
}

// scopeSQL is a scope filter's conditions: the sessions whose tenant (and
// project) label is the scope's, or, for DefaultScope, is missing or
// DefaultScope. Both forms are set lookups in labels_kv.
func scopeSQL(sc store.Scope, arg func(any) string) []string {
	cond := func(key, value string) string {
		if value == store.DefaultScope {
			return "id NOT IN (SELECT id FROM rath.labels WHERE key = " + arg(key) + " AND value <> " + arg(value) + ")"
		}
		return "id IN (SELECT id FROM rath.labels WHERE key = " + arg(key) + " AND value = " + arg(value) + ")"
	}
	t := sc.Tenant
	if t == "" {
		t = store.DefaultScope
	}
	out := []string{cond(store.LabelTenant, t)}
	if sc.Project != "" {
		out = append(out, cond(store.LabelProject, sc.Project))
	}
	return out
}

// adHoc has a filter query planned with its arguments' values: the
// store's connections keep one generic plan per prepared statement (see
// Open), which suits its lookups by key but not a filter whose best plan
// depends on how common each label value is (a few runs waiting among a
// million done). Filters are few and ad hoc; planning each is cheap.
func adHoc(args []any) []any {
	return append([]any{pgx.QueryExecModeSimpleProtocol}, args...)
}

// Count implements store.Store.
func (s *Store) Count(ctx context.Context, f store.Filter) (int, error) {
	if err := s.check(); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	where, args := filterSQL(f)
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM rath.sessions`+where, adHoc(args)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Info, error) {
	where, args := filterSQL(f)
	q := `SELECT ` + laneColumns + ` FROM rath.sessions` + where
	q += " ORDER BY created DESC, lane DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	var out []store.Info
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, q, adHoc(args)...)
		if err != nil {
			return err
		}
		lanes, err := scanLanes(rows)
		if err != nil {
			return err
		}
		out = make([]store.Info, len(lanes))
		for i, l := range lanes {
			out[i] = l.info()
		}
		return fillLabels(ctx, tx, out)
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// fillLabels reads the labels of all listed sessions in one query.
func fillLabels(ctx context.Context, tx pgx.Tx, infos []store.Info) error {
	if len(infos) == 0 {
		return nil
	}
	at := make(map[session.ID]int, len(infos))
	ids := make([]string, len(infos))
	for i, in := range infos {
		at[in.ID], ids[i] = i, string(in.ID)
	}
	rows, err := tx.Query(ctx, `SELECT id, key, value FROM rath.labels WHERE id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id session.ID
		var k, v string
		if err := rows.Scan(&id, &k, &v); err != nil {
			return err
		}
		in := &infos[at[id]]
		if in.Labels == nil {
			in.Labels = map[string]string{}
		}
		in.Labels[k] = v
	}
	return rows.Err()
}
