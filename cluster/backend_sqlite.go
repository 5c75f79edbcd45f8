package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// sqliteTx runs the cluster's own transactions on River's connection.
type sqliteTx struct{ db *sql.DB }

func (p sqliteTx) begin(ctx context.Context) (*sql.Tx, error) { return p.db.BeginTx(ctx, nil) }
func (sqliteTx) commit(_ context.Context, tx *sql.Tx) error   { return tx.Commit() }
func (sqliteTx) rollback(_ context.Context, tx *sql.Tx) error { return tx.Rollback() }
func (sqliteTx) finalize(ctx context.Context, tx *sql.Tx, id int64, why string) (bool, error) {
	// River's SQLite driver keeps times as text in this exact format.
	now := time.Now().UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
	res, err := tx.ExecContext(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = ?,
		metadata = jsonb_set(metadata, '$."rath:replaced"', ?)
		WHERE id = ? AND state = 'running'`, now, why, id)
	if err != nil {
		return false, fmt.Errorf("cluster: finalize job %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// openSQLite opens River on the store's SQLite file through a connection
// of its own (one, as River's SQLite driver asks), migrating River's tables
// first under a file lock: processes migrating one file at once race.
func openSQLite(ctx context.Context, path string, cfg *river.Config) (*rq[*sql.Tx], error) {
	dsn := "file:" + url.PathEscape(path) + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	driver := riversqlite.New(db)
	if err := migrateSQLite(ctx, path, driver); err != nil {
		db.Close()
		return nil, err
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cluster: river: %w", err)
	}
	return &rq[*sql.Tx]{client: client, tx: sqliteTx{db}, pinger: db.PingContext, closer: db.Close}, nil
}

func migrateSQLite(ctx context.Context, path string, driver *riversqlite.Driver) error {
	lock, err := os.OpenFile(path+".river-lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("cluster: migrate River's tables: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("cluster: migrate River's tables: lock %s: %w", lock.Name(), err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	m, err := rivermigrate.New(driver, nil)
	if err != nil {
		return fmt.Errorf("cluster: migrate River's tables: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("cluster: migrate River's tables of %s (rivermigrate up): %w", path, err)
	}
	return nil
}
