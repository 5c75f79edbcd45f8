package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/memory/internal/text"
)

// Put implements memory.Backend: one statement inserts or replaces the
// entry at e's URI and, with an embedder, its vector; without one, it
// drops a vector that no longer matches the content.
func (b *Backend) Put(ctx context.Context, e memory.Entry) error {
	prov, err := json.Marshal(e.Provenance)
	if err != nil {
		return err
	}
	hash := e.Hash()
	args := []any{e.URI.String(), e.URI.ScopeKey(), e.Content, hash, string(e.Provenance.Session), prov, b.language, text.Fold(e.Content)} // folded: PostgreSQL's configurations keep accents, and unaccent may not be allowed
	upsert := `WITH e AS (INSERT INTO rath_memory.entries(uri, scope, content, hash, session, provenance, tsv)
		VALUES($1, $2, $3, $4, $5, $6, to_tsvector($7::regconfig, $8))
		ON CONFLICT(uri) DO UPDATE SET content = excluded.content, hash = excluded.hash, session = excluded.session,
			provenance = excluded.provenance, tsv = excluded.tsv
		RETURNING id, scope)`
	var q string
	if b.embedder == nil {
		q = upsert + ` DELETE FROM rath_memory.vectors v USING e WHERE v.entry_id = e.id AND v.hash <> $4`
	} else {
		vec, err := b.embed(ctx, e.Content)
		if err != nil {
			return err
		}
		if err := b.ensureIndex(ctx, len(vec)); err != nil {
			return err
		}
		args = append(args, rank.EmbedderKey(b.embedder), vec, encodeVector(vec))
		q = upsert + ` INSERT INTO rath_memory.vectors(entry_id, scope, model, hash, vec, raw) SELECT id, scope, $9, $4, $10, $11 FROM e
			ON CONFLICT(entry_id) DO UPDATE SET scope = excluded.scope, model = excluded.model, hash = excluded.hash, vec = excluded.vec, raw = excluded.raw`
	}
	_, err = b.pool.Exec(ctx, q, args...)
	return err
}

func scanEntry(r pgx.Row, extra ...any) (memory.Entry, error) {
	var uri string
	var prov []byte
	var e memory.Entry
	if err := r.Scan(append([]any{&uri, &e.Content, &prov}, extra...)...); err != nil {
		return e, err
	}
	u, err := memory.ParseURI(uri)
	if err != nil {
		return e, fmt.Errorf("stored entry: %w", err)
	}
	e.URI = u
	if err := json.Unmarshal(prov, &e.Provenance); err != nil {
		return e, fmt.Errorf("stored entry %s: provenance: %w", uri, err)
	}
	return e, nil
}

// Get implements memory.Backend.
func (b *Backend) Get(ctx context.Context, uri memory.URI) (memory.Entry, error) {
	e, err := scanEntry(b.pool.QueryRow(ctx, `SELECT uri, content, provenance FROM rath_memory.entries WHERE uri = $1`, uri.String()))
	if errors.Is(err, pgx.ErrNoRows) {
		return e, fmt.Errorf("%w: %s", memory.ErrNotFound, uri)
	}
	return e, err
}

// List implements memory.Backend.
func (b *Backend) List(ctx context.Context, prefix string) ([]memory.Entry, error) {
	lo, hi := rank.PrefixRange(prefix)
	rows, err := b.pool.Query(ctx, `SELECT uri, content, provenance FROM rath_memory.entries WHERE uri >= $1 AND uri < $2 ORDER BY uri`, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Delete implements memory.Backend: one statement, so a concurrent writer
// sees the entry either whole or gone.
func (b *Backend) Delete(ctx context.Context, sel memory.Selector) ([]memory.URI, error) {
	return deleteSel(ctx, b.pool, sel)
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
}

// deleteSel deletes what sel matches through q.
func deleteSel(ctx context.Context, q querier, sel memory.Selector) ([]memory.URI, error) {
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if sel.URI != "" {
		where = append(where, "uri = "+arg(sel.URI))
	}
	if sel.Prefix != "" {
		lo, hi := rank.PrefixRange(sel.Prefix)
		where = append(where, "uri >= "+arg(lo)+" AND uri < "+arg(hi))
	}
	if sel.Session != "" {
		where = append(where, "session = "+arg(string(sel.Session)))
	}
	if len(where) == 0 {
		return nil, errors.New("memory: an empty selector")
	}
	rows, err := q.Query(ctx, `DELETE FROM rath_memory.entries WHERE `+strings.Join(where, " AND ")+` RETURNING uri`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.URI
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if u, err := memory.ParseURI(s); err == nil {
			out = append(out, u)
		}
	}
	return out, rows.Err()
}
