// Package local is the embedded memory backend: an SQLite database in the
// runtime home ($RATH_HOME/memory.db, else ./.rath/memory.db) that persists
// across runs, searched with FTS5's bm25() ranking over a Unicode tokenizer.
// A recall never returns an entry that matches no query term.
package local

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/openrath/rath/memory"
)

const schema = `
CREATE TABLE IF NOT EXISTS entries(
	uri TEXT PRIMARY KEY,
	scope TEXT NOT NULL,
	scope_token TEXT NOT NULL,
	content TEXT NOT NULL,
	session TEXT NOT NULL DEFAULT '',
	provenance TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS entries_scope ON entries(scope);
CREATE INDEX IF NOT EXISTS entries_session ON entries(session);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(content, scope_token, content='entries', content_rowid='rowid',
	tokenize='unicode61 remove_diacritics 2');
INSERT INTO entries_fts(entries_fts, rank) VALUES('rank', 'bm25(1.0, 0.0)');
CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
	INSERT INTO entries_fts(rowid, content, scope_token) VALUES (new.rowid, new.content, new.scope_token);
END;
CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN
	INSERT INTO entries_fts(entries_fts, rowid, content, scope_token) VALUES ('delete', old.rowid, old.content, old.scope_token);
END;
CREATE TRIGGER IF NOT EXISTS entries_au AFTER UPDATE ON entries BEGIN
	INSERT INTO entries_fts(entries_fts, rowid, content, scope_token) VALUES ('delete', old.rowid, old.content, old.scope_token);
	INSERT INTO entries_fts(rowid, content, scope_token) VALUES (new.rowid, new.content, new.scope_token);
END;`

// DefaultPath is where Open keeps memory when given no path.
func DefaultPath() string {
	if h := os.Getenv("RATH_HOME"); h != "" {
		return filepath.Join(h, "memory.db")
	}
	return filepath.Join(".rath", "memory.db")
}

// Open opens (creating if needed) the memory database at path (DefaultPath
// if empty).
func Open(ctx context.Context, path string) (memory.Memory, error) {
	b, err := OpenBackend(ctx, path)
	if err != nil {
		return nil, err
	}
	return memory.Over(b), nil
}

// Backend is the SQLite memory backend.
type Backend struct {
	db   *sql.DB
	path string
}

// OpenBackend opens the backend itself (Open wraps it with memory.Over).
func OpenBackend(ctx context.Context, path string) (*Backend, error) {
	if path == "" {
		path = DefaultPath()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+url.PathEscape(path)+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("memory %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("memory %s: schema: %w", path, err)
	}
	return &Backend{db: db, path: path}, nil
}

// Name implements memory.Backend.
func (b *Backend) Name() string { return "local" }

// Put implements memory.Backend.
func (b *Backend) Put(ctx context.Context, e memory.Entry) error {
	prov, err := json.Marshal(e.Provenance)
	if err != nil {
		return err
	}
	_, err = b.db.ExecContext(ctx, `INSERT INTO entries(uri, scope, scope_token, content, session, provenance) VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(uri) DO UPDATE SET scope = excluded.scope, scope_token = excluded.scope_token, content = excluded.content,
			session = excluded.session, provenance = excluded.provenance`,
		e.URI.String(), e.URI.ScopeKey(), scopeToken(e.URI.ScopeKey()), e.Content, string(e.Provenance.Session), string(prov))
	return err
}

// ftsQuery turns free text into an FTS5 query: its words, each quoted, any
// of which may match.
func ftsQuery(text string) string {
	words := ftsWords(text)
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " OR ")
}

// scopeToken is the one-word stand-in for a scope key in the full-text
// index, so that a recall filters by scope inside the index: a rare token,
// where the scope's own words ("project") would be in every row.
func scopeToken(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return "s" + hex.EncodeToString(sum[:10])
}

// ftsWords splits text into the words FTS5's tokenizer would see.
func ftsWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Search implements memory.Backend: bm25 ranking of the content (the scope
// column only filters, inside the full-text index), best first; scores
// are -bm25, so higher is better and every hit scores above zero.
func (b *Backend) Search(ctx context.Context, query string, scopes []string, k int) ([]memory.Hit, error) {
	q := ftsQuery(query)
	if q == "" || len(scopes) == 0 {
		return nil, nil
	}
	sq := make([]string, len(scopes))
	for i, s := range scopes {
		sq[i] = scopeToken(s)
	}
	match := "content : (" + q + ") AND scope_token : (" + strings.Join(sq, " OR ") + ")"
	args := []any{match}
	marks := make([]string, len(scopes))
	for i, s := range scopes {
		marks[i] = "?"
		args = append(args, s)
	}
	// FTS5 filters by scope token, ranks and limits inside the index; the
	// exact scope check after it guards against a token collision.
	args = []any{match, k + 8}
	for _, s := range scopes {
		args = append(args, s)
	}
	args = append(args, k)
	rows, err := b.db.QueryContext(ctx, `SELECT e.uri, e.content, e.provenance, -f.rank
		FROM (SELECT rowid, rank FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rank LIMIT ?) f
		JOIN entries e ON e.rowid = f.rowid
		WHERE e.scope IN (`+strings.Join(marks, ",")+`)
		ORDER BY f.rank LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []memory.Hit
	for rows.Next() {
		var h memory.Hit
		e, err := scanEntry(rows, &h.Score)
		if err != nil {
			return nil, err
		}
		h.Entry = e
		if h.Score > 0 {
			hits = append(hits, h)
		}
	}
	return hits, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanEntry(r scanner, extra ...any) (memory.Entry, error) {
	var uri, prov string
	var e memory.Entry
	if err := r.Scan(append([]any{&uri, &e.Content, &prov}, extra...)...); err != nil {
		return e, err
	}
	u, err := memory.ParseURI(uri)
	if err != nil {
		return e, fmt.Errorf("stored entry: %w", err)
	}
	e.URI = u
	if err := json.Unmarshal([]byte(prov), &e.Provenance); err != nil {
		return e, fmt.Errorf("stored entry %s: provenance: %w", uri, err)
	}
	return e, nil
}

// Get implements memory.Backend.
func (b *Backend) Get(ctx context.Context, uri memory.URI) (memory.Entry, error) {
	e, err := scanEntry(b.db.QueryRowContext(ctx, `SELECT uri, content, provenance FROM entries WHERE uri = ?`, uri.String()))
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("%w: %s", memory.ErrNotFound, uri)
	}
	return e, err
}

// List implements memory.Backend.
func (b *Backend) List(ctx context.Context, prefix string) ([]memory.Entry, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT uri, content, provenance FROM entries WHERE substr(uri, 1, length(?)) = ? ORDER BY uri`, prefix, prefix)
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

// Delete implements memory.Backend.
func (b *Backend) Delete(ctx context.Context, sel memory.Selector) ([]memory.URI, error) {
	where, args := []string{}, []any{}
	if sel.URI != "" {
		where, args = append(where, "uri = ?"), append(args, sel.URI)
	}
	if sel.Prefix != "" {
		where, args = append(where, "substr(uri, 1, length(?)) = ?"), append(args, sel.Prefix, sel.Prefix)
	}
	if sel.Session != "" {
		where, args = append(where, "session = ?"), append(args, string(sel.Session))
	}
	if len(where) == 0 {
		return nil, fmt.Errorf("memory: an empty selector")
	}
	rows, err := b.db.QueryContext(ctx, `DELETE FROM entries WHERE `+strings.Join(where, " AND ")+` RETURNING uri`, args...)
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

// Close implements memory.Backend.
func (b *Backend) Close() error { return b.db.Close() }

var _ memory.Backend = (*Backend)(nil)
