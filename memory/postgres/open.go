package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/model"
)

func init() {
	for _, scheme := range []string{"postgres", "postgresql"} {
		memory.Register(scheme, func(ctx context.Context, u *url.URL, o memory.Options) (memory.Memory, error) {
			return Open(ctx, u.String(), o)
		})
	}
}

// defaultMaxConns is the pool size when the URL sets no pool_max_conns.
const defaultMaxConns = 16

// defaultLanguage is the text-search configuration of a new memory.
const defaultLanguage = "english"

// Vector search modes.
const (
	VectorsAuto  = "auto"  // pgvector's HNSW if the server has pgvector, else exact
	VectorsHNSW  = "hnsw"  // pgvector required
	VectorsExact = "exact" // an exact scan, pgvector or not
)

// ErrNoPgvector: vectors=hnsw, and the server cannot provide pgvector.
var ErrNoPgvector = errors.New("memory/postgres: pgvector is not available")

// Backend is the PostgreSQL memory backend, safe for concurrent use by any
// number of processes on one database.
type Backend struct {
	name     string // redacted URL
	pool     *pgxpool.Pool
	language string
	embedder model.Embedder // nil: lexical recall alone
	minSim   float32
	hnsw     bool // vectors searched through pgvector's HNSW index
	// iterative: the index scan goes on until enough rows pass the scope
	// filter (pgvector 0.8); before it, a wider search stands in.
	iterative bool
	why       string // why not, when !hnsw
	pgvector  string // the extension's version, if installed

	mu      sync.Mutex
	indexed map[string]bool // HNSW indexes known to exist, by model and dimension
	stats   idfStats
}

// Open opens the memory at a postgres:// URL (see the package comment for
// its parameters) and wraps it with memory.Over.
func Open(ctx context.Context, rawURL string, o memory.Options) (memory.Memory, error) {
	b, err := OpenBackend(ctx, rawURL, o)
	if err != nil {
		return nil, err
	}
	return memory.Over(b), nil
}

// params are the URL parameters this package reads.
type params struct {
	language, vectors string
	minSim            float32
}

// splitURL takes this package's parameters, and the store's durability,
// out of a connection URL.
func splitURL(raw string) (string, params, error) {
	p := params{vectors: VectorsAuto, minSim: 0.25}
	u, err := url.Parse(raw)
	if err != nil {
		return "", p, err
	}
	q := u.Query()
	p.language = q.Get("language")
	if v := q.Get("vectors"); v != "" {
		p.vectors = v
	}
	switch p.vectors {
	case VectorsAuto, VectorsHNSW, VectorsExact:
	default:
		return "", p, fmt.Errorf("vectors=%q: auto, hnsw or exact", p.vectors)
	}
	if v := q.Get("min_similarity"); v != "" {
		f, err := strconv.ParseFloat(v, 32)
		if err != nil || f < -1 || f > 1 {
			return "", p, fmt.Errorf("min_similarity=%q: a number from -1 to 1", v)
		}
		p.minSim = float32(f)
	}
	for _, k := range []string{"language", "vectors", "min_similarity", "durability"} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	return u.String(), p, nil
}

// OpenBackend opens the backend itself.
func OpenBackend(ctx context.Context, rawURL string, o memory.Options) (*Backend, error) {
	conn, p, err := splitURL(rawURL)
	var name string // host and database, never the credentials
	if u, perr := url.Parse(rawURL); perr == nil {
		name = u.Host + u.Path
	}
	if err != nil {
		return nil, fmt.Errorf("memory/postgres %s: %w", name, err)
	}
	b := &Backend{name: name, embedder: o.Embedder, minSim: p.minSim, indexed: map[string]bool{}}
	if err := b.setUp(ctx, conn, p); err != nil {
		return nil, fmt.Errorf("memory/postgres %s: %w", name, err)
	}
	cfg, err := pgxpool.ParseConfig(conn)
	if err != nil {
		return nil, fmt.Errorf("memory/postgres %s: %w", name, err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "rath memory"
	if !strings.Contains(conn, "pool_max_conns") {
		// pgx's default (the CPUs, at least 4) queues concurrent writers
		// behind each other's commit round trips.
		cfg.MaxConns = defaultMaxConns
	}
	if b.hnsw {
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			if err := pgxvec.RegisterTypes(ctx, c); err != nil {
				return err
			}
			// Scope filters apply after the index scan: iterate until
			// enough rows pass them rather than return fewer.
			if !b.iterative {
				_, err := c.Exec(ctx, `SET hnsw.ef_search = 400`)
				return err
			}
			_, err := c.Exec(ctx, `SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 100`)
			return err
		}
	}
	if b.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("memory/postgres %s: %w", name, err)
	}
	if err := b.pool.Ping(ctx); err != nil {
		b.pool.Close()
		return nil, fmt.Errorf("memory/postgres %s: connect: %w", name, err)
	}
	o.Log().Info("memory/postgres: opened", "memory", b.Describe())
	return b, nil
}

// setUp migrates the schema on one connection and decides how vectors are
// searched.
func (b *Backend) setUp(ctx context.Context, connURL string, p params) error {
	c, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer c.Close(ctx)
	if p.language != "" {
		if _, err := c.Exec(ctx, `SELECT $1::regconfig`, p.language); err != nil {
			return fmt.Errorf("language %q is not a text-search configuration of this server: %w", p.language, err)
		}
	}
	if b.language, err = migrate(ctx, c, p.language); err != nil {
		return err
	}
	version, err := enablePgvector(ctx, c, p.vectors != VectorsExact)
	b.pgvector = version
	switch {
	case p.vectors == VectorsExact:
		b.why = "vectors=exact"
	case err != nil && p.vectors == VectorsHNSW:
		return fmt.Errorf("%w: %v", ErrNoPgvector, err)
	case err != nil:
		b.why = err.Error()
	case !versionAtLeast(version, 0, 5):
		b.why = "pgvector " + version + " has no HNSW index (0.5.0 or later has)"
	default:
		b.hnsw = true
		b.iterative = versionAtLeast(version, 0, 8)
	}
	return nil
}

// enablePgvector makes the vectors table carry a pgvector column when the
// server has the extension (creating it if want), and returns the
// extension's version. The column is generated from the real[] vectors,
// so writers that do not use pgvector keep it filled all the same.
func enablePgvector(ctx context.Context, c *pgx.Conn, want bool) (string, error) {
	var installed, available *string
	if err := c.QueryRow(ctx, `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'),
		(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')`).Scan(&installed, &available); err != nil {
		return "", err
	}
	switch {
	case installed == nil && available == nil:
		return "", errors.New("the server has no pgvector extension")
	case installed == nil && !want:
		return "", errors.New("pgvector not installed in this database")
	}
	err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		if installed == nil {
			if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
				return fmt.Errorf("create extension vector: %w", err)
			}
		}
		_, err := tx.Exec(ctx, `ALTER TABLE rath_memory.vectors ADD COLUMN IF NOT EXISTS embedding vector GENERATED ALWAYS AS (vec::vector) STORED`)
		return err
	})
	if err != nil {
		return "", err
	}
	var v string
	err = c.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&v)
	return v, err
}

// versionAtLeast reports whether an extension version "M.m.p" is at least
// major.minor.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// Name implements memory.Backend.
func (b *Backend) Name() string { return "postgres" }

// Describe implements memory.Describer.
func (b *Backend) Describe() string {
	s := "postgres " + b.name + ": full-text (" + b.language + ", idf-weighted ts_rank)"
	switch {
	case b.embedder == nil && b.hnsw:
		s += "; vectors unused (no embedder; pgvector " + b.pgvector + " HNSW ready)"
	case b.embedder == nil:
		s += "; vectors unused (no embedder)"
	case b.hnsw:
		s += " + vectors (" + rank.EmbedderKey(b.embedder) + ") by pgvector " + b.pgvector + " HNSW, cosine"
		if !b.iterative {
			s += " (no iterative scan before pgvector 0.8: a recall of a few scopes may find fewer)"
		}
	default:
		s += " + vectors (" + rank.EmbedderKey(b.embedder) + ") by exact scan (" + b.why + ")"
	}
	return s
}

// Index is how vectors are searched: "hnsw" or "exact".
func (b *Backend) Index() string {
	if b.hnsw {
		return "hnsw"
	}
	return "exact"
}

// Close implements memory.Backend.
func (b *Backend) Close() error {
	b.pool.Close()
	return nil
}

var (
	_ memory.Backend   = (*Backend)(nil)
	_ memory.Describer = (*Backend)(nil)
)
