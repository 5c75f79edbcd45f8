package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/postgres"
)

// pgTx runs the cluster's own transactions on the store's pool.
type pgTx struct{ pool *pgxpool.Pool }

func (p pgTx) begin(ctx context.Context) (pgx.Tx, error)   { return p.pool.Begin(ctx) }
func (pgTx) commit(ctx context.Context, tx pgx.Tx) error   { return tx.Commit(ctx) }
func (pgTx) rollback(ctx context.Context, tx pgx.Tx) error { return tx.Rollback(ctx) }
func (pgTx) finalize(ctx context.Context, tx pgx.Tx, id int64, why string) (bool, error) {
	tag, err := tx.Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now(),
		metadata = metadata || jsonb_build_object('rath:replaced', $2::text)
		WHERE id = $1 AND state = 'running'`, id, why)
	if err != nil {
		return false, fmt.Errorf("cluster: finalize job %d: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// openPostgres opens River on the PostgreSQL store's own pool (so that a
// store commit and a job insert can share a transaction), migrating
// River's tables first under an advisory lock.
func openPostgres(ctx context.Context, st *postgres.Store, cfg *river.Config) (*rq[pgx.Tx], error) {
	pool := st.Pool()
	driver := riverpgxv5.New(pool)
	if err := migratePostgres(ctx, pool, driver); err != nil {
		return nil, err
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: river: %w", err)
	}
	return &rq[pgx.Tx]{client: client, tx: pgTx{pool}, pinger: pool.Ping}, nil
}

// migrateLockKey is the advisory lock held while River's tables migrate.
const migrateLockKey = 0x72617468 // "rath"

func migratePostgres(ctx context.Context, pool *pgxpool.Pool, driver *riverpgxv5.Driver) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("cluster: migrate River's tables: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLockKey)); err != nil {
		return fmt.Errorf("cluster: migrate River's tables: lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLockKey))
	}()
	m, err := rivermigrate.New(driver, nil)
	if err != nil {
		return fmt.Errorf("cluster: migrate River's tables: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("cluster: migrate River's tables (rivermigrate up): %w", err)
	}
	return nil
}

// commitAndEnqueuePG commits s (from prev), inserts its run's job and sets
// the run's labels (with the job's id) in one transaction.
func commitAndEnqueuePG(ctx context.Context, qu queue, st *postgres.Store, c commitJob) (int64, error) {
	q, ok := qu.(*rq[pgx.Tx])
	if !ok {
		return 0, fmt.Errorf("cluster: the queue is not on PostgreSQL")
	}
	tx, err := q.tx.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := st.CommitTx(ctx, tx, c.s, c.prev); err != nil {
		return 0, err
	}
	res, err := q.client.InsertTx(ctx, tx, runArgs{Run: c.run}, insertOpts(c.queue))
	if err != nil {
		return 0, fmt.Errorf("cluster: enqueue %s: %w", c.run, err)
	}
	labels := maps.Clone(c.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelJob] = strconv.FormatInt(res.Job.ID, 10)
	if err := st.SetLabelsTx(ctx, tx, session.ID(c.run), labels); err != nil {
		return 0, fmt.Errorf("cluster: run %s: %w", c.run, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

// submitPG commits prepared runs routed to pools — their inputs, their
// jobs and their records with the jobs' ids — in one transaction.
func submitPG(ctx context.Context, qu queue, st *postgres.Store, runs []*prepared) error {
	q, ok := qu.(*rq[pgx.Tx])
	if !ok {
		return fmt.Errorf("cluster: the queue is not on PostgreSQL")
	}
	tx, err := q.tx.begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	params := make([]river.InsertManyParams, len(runs))
	for i, p := range runs {
		if err := st.CommitTx(store.WithCreateScope(ctx, p.scope()), tx, p.in, ""); err != nil {
			return err
		}
		params[i] = river.InsertManyParams{Args: runArgs{Run: string(p.run.ID)}, InsertOpts: insertOpts(p.queue)}
	}
	res, err := q.client.InsertManyTx(ctx, tx, params)
	if err != nil {
		return fmt.Errorf("cluster: enqueue: %w", err)
	}
	// Each job's id goes on its run (matched by the job's arguments, not
	// by the order River returns them in).
	jobs := make(map[session.ID]int64, len(res))
	for _, r := range res {
		var a runArgs
		if err := json.Unmarshal(r.Job.EncodedArgs, &a); err != nil {
			return fmt.Errorf("cluster: job %d: %w", r.Job.ID, err)
		}
		jobs[session.ID(a.Run)] = r.Job.ID
	}
	labels := make(map[session.ID]map[string]string, len(runs))
	for _, p := range runs {
		job, ok := jobs[p.run.ID]
		if !ok {
			return fmt.Errorf("cluster: River returned no job for run %s", p.run.ID)
		}
		l := maps.Clone(p.labels)
		l[LabelJob] = strconv.FormatInt(job, 10)
		labels[p.run.ID] = l
	}
	if err := st.SetManyLabelsTx(ctx, tx, labels); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
