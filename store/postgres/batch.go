package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The committer is this process's group commit, as the SQLite store's writer
// is: the one-statement appends (casAppend) of concurrent Commit calls are
// sent together as one pipeline, which PostgreSQL runs as one implicit
// transaction. PostgreSQL groups concurrent WAL flushes by itself, but a
// transaction that NOTIFYs holds a database-wide lock from its pre-commit
// until after its flush, so notifying commits flush one at a time; batching
// them here gives each batch one lock, one flush and one round trip.
//
// Other processes' commits interleave with a batch under the same row locks
// as single commits do, so compare-and-swap works across processes as
// before. If a batch fails as a whole (a deadlock with another process,
// say), its appends are retried one by one.

// maxCASBatch bounds one batch.
const maxCASBatch = 256

// casAppendSQL moves a session's head from $4 at length $5 to $2 at length
// $3 and stores the new segment rows, or changes nothing and returns no row.
const casAppendSQL = `WITH upd AS (
		UPDATE rath.sessions SET head = $2, len = $3, updated = now()
		WHERE id = $1 AND head = $4 AND len = $5
		RETURNING lane, compact_from),
	seg AS (
		INSERT INTO rath.segments(lane, first, n, data)
		SELECT upd.lane, r.first, r.n, r.data
		FROM upd, unnest($6::integer[], $7::integer[], $8::bytea[]) AS r(first, n, data))
	SELECT lane, compact_from, pg_notify('rath_commits', $9) IS NULL FROM upd`

type casJob struct {
	ctx  context.Context
	id   session.ID
	args []any
	done chan casResult // buffered
}

type casResult struct {
	ok          bool // the head moved; false: the stored head was not prev
	lane        int64
	compactFrom int
	err         error
}

type committer struct {
	pool    *pgxpool.Pool
	jobs    chan *casJob
	quit    chan struct{}
	stopped chan struct{}
}

// casWorkers is how many batches may be in flight at once. Each runs on
// one server backend, which executes its statements one after another; a
// second lets the server execute one batch while the other waits for its
// flush, and use a second core.
const casWorkers = 2

func newCommitter(pool *pgxpool.Pool) *committer {
	c := &committer{pool: pool, jobs: make(chan *casJob, maxCASBatch), quit: make(chan struct{}), stopped: make(chan struct{})}
	var wg sync.WaitGroup
	for range casWorkers {
		wg.Go(c.loop)
	}
	go func() { wg.Wait(); close(c.stopped) }()
	return c
}

// do runs one append in the next batch and waits for its outcome.
func (c *committer) do(ctx context.Context, id session.ID, args ...any) casResult {
	j := &casJob{ctx: ctx, id: id, args: args, done: make(chan casResult, 1)}
	select {
	case c.jobs <- j:
	case <-c.quit:
		return casResult{err: store.ErrClosed}
	case <-ctx.Done():
		return casResult{err: ctx.Err()}
	}
	select {
	case r := <-j.done:
		return r
	case <-c.stopped:
		select {
		case r := <-j.done:
			return r
		default:
			return casResult{err: store.ErrClosed}
		}
	case <-ctx.Done():
		// The append may still run; commits are idempotent, so a retry is safe.
		return casResult{err: ctx.Err()}
	}
}

func (c *committer) loop() {
	batch := make([]*casJob, 0, maxCASBatch)
	for {
		select {
		case j := <-c.jobs:
			batch = append(batch[:0], j)
		case <-c.quit:
			// Run what was queued before Close, then stop.
			for {
				select {
				case j := <-c.jobs:
					c.run([]*casJob{j})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < maxCASBatch {
			select {
			case j := <-c.jobs:
				batch = append(batch, j)
			default:
				break fill
			}
		}
		c.run(batch)
	}
}

func (c *committer) run(batch []*casJob) {
	live := batch[:0:0]
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil {
			j.done <- casResult{err: err}
		} else {
			live = append(live, j)
		}
	}
	if len(live) == 0 {
		return
	}
	// One lock order for every batch: two batches touching the same
	// sessions wait for each other instead of deadlocking.
	slices.SortStableFunc(live, func(a, b *casJob) int { return cmp.Compare(a.id, b.id) })
	results, err := c.send(live)
	if err != nil && len(live) > 1 {
		for _, j := range live { // the batch was rolled back whole
			c.run([]*casJob{j})
		}
		return
	}
	for i, j := range live {
		if err != nil {
			j.done <- casResult{err: err}
		} else {
			j.done <- results[i]
		}
	}
}

// send runs the batch as one pipeline and implicit transaction. Its results
// count only once the transaction has committed, which Close reports.
func (c *committer) send(live []*casJob) ([]casResult, error) {
	b := &pgx.Batch{}
	for _, j := range live {
		b.Queue(casAppendSQL, j.args...)
	}
	// Not a job's context: the batch is shared, and ending it early would
	// fail the other jobs.
	ctx := context.Background()
	br := c.pool.SendBatch(ctx, b)
	results := make([]casResult, len(live))
	var err error
	for i := range live {
		r := &results[i]
		err = br.QueryRow().Scan(&r.lane, &r.compactFrom, new(bool))
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
			continue
		}
		if err != nil {
			break
		}
		r.ok = true
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	return results, nil
}

// close stops the committer after the queued appends ran. Store.Close
// calls it once.
func (c *committer) close() {
	close(c.quit)
	<-c.stopped
}
