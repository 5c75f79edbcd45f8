package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

func init() {
	store.Register("sqlite", func(ctx context.Context, u *url.URL) (store.Store, error) {
		path := u.Path
		if u.Opaque != "" { // sqlite:relative/path.db
			path = u.Opaque
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("sqlite store: URL %q names host %q; use sqlite:///absolute/path or sqlite:relative/path", store.Redact(u.String()), u.Host)
		}
		d, err := store.ParseDurability(u.Query().Get("durability"))
		if err != nil {
			return nil, err
		}
		return Open(ctx, Options{Path: path, Durability: d})
	})
}

// Options configure Open.
type Options struct {
	// Path of the database file; its directory is created if missing.
	Path string
	// Durability of commits; Sync if empty.
	Durability store.Durability
}

// Store is the SQLite store. See the package comment.
type Store struct {
	path   string
	dur    store.Durability
	w      *writer
	wdb    *sql.DB // the writer's single connection
	rdb    *sql.DB // readers
	hub    backend.Hub
	closed atomic.Bool
	origin int64      // names this store's rows in the change log
	watch  watchState // the poller of other connections' writes
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database at opts.Path.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Path == "" {
		return nil, errors.New("sqlite store: no database path")
	}
	d, err := store.ParseDurability(string(opts.Durability))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	sync := "FULL"
	if d == store.Exit {
		sync = "OFF"
	}
	base := "file:" + url.PathEscape(opts.Path) + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(off)"
	wdb, err := sql.Open("sqlite", base+"&_pragma=journal_mode(WAL)&_pragma=synchronous("+sync+")&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", opts.Path, err)
	}
	wdb.SetMaxOpenConns(1)
	if err := wdb.PingContext(ctx); err != nil {
		wdb.Close()
		return nil, describeOpenError(opts.Path, err)
	}
	if err := migrate(ctx, wdb, opts.Path); err != nil {
		wdb.Close()
		return nil, describeOpenError(opts.Path, err)
	}
	rdb, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		wdb.Close()
		return nil, err
	}
	rdb.SetMaxOpenConns(8)
	s := &Store{path: opts.Path, dur: d, wdb: wdb, rdb: rdb, origin: newOrigin()}
	if s.w, err = newWriter(ctx, wdb, &s.hub, s.origin); err != nil {
		rdb.Close()
		wdb.Close()
		return nil, describeOpenError(opts.Path, err)
	}
	return s, nil
}

// describeOpenError turns SQLite's terse errors about a damaged or foreign
// file into one sentence naming the file.
func describeOpenError(path string, err error) error {
	if errors.Is(err, store.ErrVersion) {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed") || strings.Contains(msg, "corrupt") {
		return fmt.Errorf("sqlite store %s: the file is not a valid rath database (corrupt, or another kind of file): %w", path, err)
	}
	return fmt.Errorf("sqlite store %s: %w", path, err)
}

func isNoTable(err error) bool { return err != nil && strings.Contains(err.Error(), "no such table") }

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close commits what is queued, makes it durable, and closes the database.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stopWatching()
	s.w.close()
	s.hub.CloseAll()
	var errs []error
	errs = append(errs, s.w.err())
	// Exit durability wrote without fsync: make everything durable now.
	if s.dur == store.Exit {
		if _, err := s.wdb.Exec(`PRAGMA synchronous=FULL`); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := s.wdb.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		errs = append(errs, fmt.Errorf("sqlite store %s: checkpoint: %w", s.path, err))
	}
	errs = append(errs, s.rdb.Close(), s.wdb.Close())
	return errors.Join(errs...)
}

func (s *Store) check() error {
	if s.closed.Load() {
		return fmt.Errorf("sqlite store %s: %w", s.path, store.ErrClosed)
	}
	return nil
}

// write runs fn in the writer with this store's durability.
func (s *Store) write(ctx context.Context, fn func(tx *wtx, evs *[]store.Event) error) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.w.do(ctx, s.dur != store.Sync, fn)
}

// read runs fn in a read-only transaction: one consistent snapshot. In
// async and exit durability it first waits for queued commits, so a reader
// always sees the commits that returned before it.
func (s *Store) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.dur != store.Sync {
		if err := s.w.flush(ctx); err != nil {
			return err
		}
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	defer tx.Rollback()
	return fn(tx)
}
