// Package local is the embedded memory backend: an SQLite database in the
// runtime home ($RATH_HOME/memory.db, else ./.rath/memory.db) that persists
// across runs, searched by BM25 over its own lexical index (lexicon.go,
// bm25.go, impact.go). A recall never returns an entry that matches no query term.
//
// Each scope owns a range of rowids (its id << 32 | a sequence number), so
// a recall reads each term's postings of the scopes it was given as
// contiguous ranges, while the term statistics stay those of the whole
// database.
//
// With an embedder, a recall also ranks by cosine similarity through an
// in-memory nearest-neighbour index of each scope it names (see annIndex):
// an exact scan below a few thousand vectors, an HNSW graph above, kept in
// step with other handles and processes through a change log in the
// database and persisted beside it (<database>.ann/).
package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/model"
)

// DefaultPath is where Open keeps memory when given no path.
func DefaultPath() string {
	if h := os.Getenv("RATH_HOME"); h != "" {
		return filepath.Join(h, "memory.db")
	}
	return filepath.Join(".rath", "memory.db")
}

// maxIdle is how many connections a handle keeps open between uses.
const maxIdle = 8

// Open opens (creating if needed) the memory database at path (DefaultPath
// if empty).
func Open(ctx context.Context, path string, opts ...Option) (memory.Memory, error) {
	b, err := OpenBackend(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	return memory.Over(b), nil
}

// Backend is the SQLite memory backend. It is safe for concurrent use, and
// several processes may share one database.
type Backend struct {
	db    *sql.DB
	path  string
	stmts *stmts

	mu     sync.Mutex
	scopes map[string]int64 // scope ids never change once given

	embedder model.Embedder // nil: bm25 alone
	minSim   float32
	annCfg   annConfig
	ann      *annIndex // with an embedder: the vector index

	lex    lexStats
	shares shares // for byImpact
}

// OpenBackend opens the backend itself (Open wraps it with memory.Over).
func OpenBackend(ctx context.Context, path string, opts ...Option) (*Backend, error) {
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
	// A recall reads each scope on a connection of its own; closing the
	// connections beyond database/sql's default two idle ones would make
	// recalls open them again (parsing the schema, their page caches
	// cold, their statements unprepared).
	db.SetMaxIdleConns(maxIdle)
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("memory %s: schema: %w", path, err)
	}
	st, err := prepareStmts(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("memory %s: %w", path, err)
	}
	b := &Backend{db: db, path: path, stmts: st, scopes: map[string]int64{}, minSim: 0.25, annCfg: defaultANN()}
	for _, o := range opts {
		o(b)
	}
	if err := b.annCfg.check(); err != nil {
		b.stmts.close()
		db.Close()
		return nil, err
	}
	if b.embedder != nil {
		b.ann = newANN(db, path+".ann", rank.EmbedderKey(b.embedder), b.annCfg)
	}
	return b, nil
}

// Name implements memory.Backend.
func (b *Backend) Name() string { return "local" }

// Put implements memory.Backend: it replaces the entry at e's URI in place
// or adds it at the end of its scope's rowid range.
func (b *Backend) Put(ctx context.Context, e memory.Entry) error {
	var vec []float32
	if b.embedder != nil {
		v, err := b.embed(ctx, e.Content)
		if err != nil {
			return err
		}
		vec = v
	}
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rowid, err := b.put(ctx, tx, e)
	if err != nil {
		return err
	}
	if vec != nil {
		if err := b.putVector(ctx, tx, rowid, vec); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// put writes e inside tx and returns its rowid.
func (b *Backend) put(ctx context.Context, tx *sql.Tx, e memory.Entry) (int64, error) {
	prov, err := json.Marshal(e.Provenance)
	if err != nil {
		return 0, err
	}
	uri, session := e.URI.String(), string(e.Provenance.Session)
	terms, length := termsOf(e.Content)
	var rowid int64
	err = tx.StmtContext(ctx, b.stmts.update).QueryRowContext(ctx, e.Content, session, string(prov), terms, length, uri).Scan(&rowid)
	if !errors.Is(err, sql.ErrNoRows) {
		return rowid, err
	}
	id, err := scopeIDTx(ctx, tx, e.URI.ScopeKey())
	if err != nil {
		return 0, err
	}
	if rowid, err = nextRowid(ctx, tx, id); err != nil {
		return 0, err
	}
	_, err = tx.StmtContext(ctx, b.stmts.insert).ExecContext(ctx, rowid, uri, e.URI.ScopeKey(), e.Content, session, string(prov), terms, length)
	return rowid, err
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
	lo, hi := rank.PrefixRange(prefix)
	rows, err := b.db.QueryContext(ctx, `SELECT uri, content, provenance FROM entries WHERE uri >= ? AND uri < ? ORDER BY uri`, lo, hi)
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
	return deleteSel(ctx, b.db, sel)
}

// querier is a database or a transaction.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// deleteSel deletes what sel matches through q.
func deleteSel(ctx context.Context, db querier, sel memory.Selector) ([]memory.URI, error) {
	where, args := []string{}, []any{}
	if sel.URI != "" {
		where, args = append(where, "uri = ?"), append(args, sel.URI)
	}
	if sel.Prefix != "" {
		lo, hi := rank.PrefixRange(sel.Prefix)
		where, args = append(where, "uri >= ? AND uri < ?"), append(args, lo, hi)
	}
	if sel.Session != "" {
		where, args = append(where, "session = ?"), append(args, string(sel.Session))
	}
	if len(where) == 0 {
		return nil, fmt.Errorf("memory: an empty selector")
	}
	q := `DELETE FROM entries WHERE ` + where[0]
	for _, w := range where[1:] {
		q += " AND " + w
	}
	rows, err := db.QueryContext(ctx, q+` RETURNING uri`, args...)
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

// Close implements memory.Backend. It saves the vector index's graphs
// that are due (see annIndex) before closing the database.
func (b *Backend) Close() error {
	if b.ann != nil {
		b.ann.close()
	}
	return errors.Join(b.stmts.close(), b.db.Close())
}

var _ memory.Backend = (*Backend)(nil)
