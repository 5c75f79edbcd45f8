package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

func init() {
	for _, scheme := range []string{"postgres", "postgresql"} {
		store.Register(scheme, func(ctx context.Context, u *url.URL) (store.Store, error) {
			return Open(ctx, Options{URL: u.String()})
		})
	}
}

// Options configure Open.
type Options struct {
	// URL is a PostgreSQL connection URL as pgx reads it (pool_max_conns and
	// the other pgxpool parameters included). A durability parameter is
	// taken out and used when Durability is empty.
	URL string
	// Durability of commits; Sync if empty (and the URL names none).
	Durability store.Durability
}

// defaultMaxConns is the pool size when the URL sets no pool_max_conns.
// pgx's default (the number of CPUs, at least 4) serialises concurrent
// committers behind network round trips; each commit holds a connection for
// a few of them, so a larger pool lets the server group their WAL flushes.
const defaultMaxConns = 16

// Store is the PostgreSQL store. See the package comment.
type Store struct {
	name   string // the redacted URL, for messages
	dur    store.Durability
	pool   *pgxpool.Pool
	cas    *committer
	hub    backend.Hub
	lis    listener
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at opts.URL and brings its schema up to date.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.URL == "" {
		return nil, errors.New("postgres store: no database URL")
	}
	name := store.Redact(opts.URL)
	connURL, urlDur, hasMax, err := splitURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres store %s: %w", name, err)
	}
	if opts.Durability == "" {
		opts.Durability = store.Durability(urlDur)
	}
	d, err := store.ParseDurability(string(opts.Durability))
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(connURL)
	if err != nil {
		return nil, fmt.Errorf("postgres store %s: %w", name, err)
	}
	if !hasMax {
		cfg.MaxConns = defaultMaxConns
	}
	// Durability is a property of the store, so it is set once per
	// connection rather than with SET LOCAL in every transaction: the same
	// effect without a round trip. sync is set explicitly too, so a server
	// whose default is off cannot silently weaken it.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	if d != store.Sync {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "rath"
	// The store's statements are few, prepared once per connection, and
	// shaped so that one plan serves every argument (lookups by key,
	// arrays unnested). Left to choose, the server re-plans the CTEs with
	// many parameters on every execution; measured on the cluster's
	// fan-out, planning was a quarter of the server's CPU. A URL that sets
	// plan_cache_mode keeps its own.
	if _, set := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store %s: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store %s: connect: %w", name, err)
	}
	if err := migrate(ctx, pool, name); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{name: name, dur: d, pool: pool, cas: newCommitter(pool)}, nil
}

// splitURL takes the durability parameter out of a connection URL (pgx
// would refuse it as an unknown run-time parameter) and tells whether the
// URL sizes the pool itself.
func splitURL(raw string) (conn, durability string, hasMaxConns bool, err error) {
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
		// A key=value DSN: pass it through untouched.
		return raw, "", strings.Contains(raw, "pool_max_conns"), nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false, err
	}
	q := u.Query()
	durability = q.Get("durability")
	q.Del("durability")
	hasMaxConns = q.Has("pool_max_conns")
	u.RawQuery = q.Encode()
	return u.String(), durability, hasMaxConns, nil
}

// URL returns the store's URL with any password redacted.
func (s *Store) URL() string { return s.name }

// Close stops the listener and closes the pool. In async and exit
// durability it first forces one synchronous commit, which flushes the
// server's WAL through every commit made before it.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cas.close()
	s.lis.stop()
	s.hub.CloseAll()
	var err error
	if s.dur != store.Sync {
		err = s.flushWAL(context.Background())
	}
	s.pool.Close()
	return err
}

// flushWAL commits a one-row write with synchronous_commit on. A commit
// flushes the WAL up to its own record, which lies after every earlier
// commit's; a transaction that wrote nothing would not flush at all.
func (s *Store) flushWAL(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres store %s: flush: %w", s.name, err)
	}
	defer tx.Rollback(ctx)
	for _, q := range []string{
		`SET LOCAL synchronous_commit = on`,
		`UPDATE rath.meta SET value = value WHERE key = 'schema_version'`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres store %s: flush: %w", s.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres store %s: flush: %w", s.name, err)
	}
	return nil
}

func (s *Store) check() error {
	if s.closed.Load() {
		return fmt.Errorf("postgres store %s: %w", s.name, store.ErrClosed)
	}
	return nil
}
