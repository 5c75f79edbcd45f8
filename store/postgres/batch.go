package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

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

// casBatchSQL moves the heads of a batch of sessions, each from its prev
// head at length prevlen to head at length len, if it still is there,
// stores the segment rows of those that moved, notifies watchers, and
// returns the batch positions (idx) that moved. A session appearing twice
// in a batch (two writers racing on it) moves at most once: UPDATE ... FROM
// takes one source row per target row, and the loser is not returned.
// One statement for the whole batch: the server plans and runs it once,
// where a statement per append cost it most of its time.
//
// A fenced append (fid not empty) moves only while session fid's epoch is
// fepoch, checked with a share lock on fid's row in the same statement: an
// Advance waits for the statement, and a statement that waited for an
// Advance re-reads the row (READ COMMITTED) and does not move. An append
// fenced by its own session checks the epoch on the row it updates, which
// it locks anyway (a share lock and then an update by two such writers
// would deadlock); CASE keeps the share-locking subquery from running.
const casBatchSQL = `WITH u AS (
		SELECT * FROM unnest($1::integer[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::integer[], $7::text[],
			$12::text[], $13::bigint[])
			AS u(idx, id, head, len, prev, prevlen, payload, fid, fepoch)),
	upd AS (
		UPDATE rath.sessions s SET head = u.head, len = u.len, updated = now()
		FROM u WHERE s.id = u.id AND s.head = u.prev AND s.len = u.prevlen
			AND CASE WHEN u.fid = '' THEN true WHEN u.fid = s.id THEN s.epoch = u.fepoch
				ELSE EXISTS (SELECT 1 FROM rath.sessions f WHERE f.id = u.fid AND f.epoch = u.fepoch FOR SHARE OF f) END
		RETURNING u.idx, s.lane, s.compact_from, u.payload),
	seg AS (
		INSERT INTO rath.segments(lane, first, n, data)
		SELECT upd.lane, r.first, r.n, r.data
		FROM upd JOIN unnest($8::integer[], $9::integer[], $10::integer[], $11::bytea[]) AS r(idx, first, n, data)
			ON r.idx = upd.idx)
	SELECT idx, lane, compact_from, pg_notify('rath_commits', payload) IS NULL FROM upd`

type casJob struct {
	ctx context.Context
	casAppend
	done chan casResult // buffered
}

// casAppend is one session's append: its head moves from prev (at length
// prevLen) to head (at length len), adding rows.
type casAppend struct {
	id        session.ID
	head      session.ChunkID
	len       int
	prev      session.ChunkID
	prevLen   int
	rows      segRows
	eventJSON string
	// fence, if set, must hold for the append to move (see casBatchSQL).
	fence *store.Fence
}

type casResult struct {
	ok          bool // the head moved; false: the stored head was not prev
	lane        int64
	compactFrom int
	err         error
}

type committer struct {
	pool     *pgxpool.Pool
	inflight atomic.Int64 // appends submitted and not yet answered
	jobs     chan *casJob
	quit     chan struct{}
	stopped  chan struct{}
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

// do runs one append, alone (see casone.go) or in the next batch, and
// waits for its outcome.
func (c *committer) do(ctx context.Context, a casAppend) casResult {
	j := &casJob{ctx: ctx, casAppend: a, done: make(chan casResult, 1)}
	defer c.inflight.Add(-1)
	if r, ok := c.alone(j, c.inflight.Add(1)); ok {
		return r
	}
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

// casOneSQL is casBatchSQL for a batch of one, without the arrays: a lone
// commit's statement is cheaper to plan and run.
const casOneSQL = `WITH upd AS (
		UPDATE rath.sessions SET head = $2, len = $3, updated = now()
		WHERE id = $1 AND head = $4 AND len = $5
			AND CASE WHEN $10::text = '' THEN true WHEN $10 = id THEN epoch = $11
				ELSE EXISTS (SELECT 1 FROM rath.sessions f WHERE f.id = $10 AND f.epoch = $11 FOR SHARE OF f) END
		RETURNING lane, compact_from),
	seg AS (
		INSERT INTO rath.segments(lane, first, n, data)
		SELECT upd.lane, r.first, r.n, r.data
		FROM upd, unnest($6::integer[], $7::integer[], $8::bytea[]) AS r(first, n, data))
	SELECT 0, lane, compact_from, pg_notify('rath_commits', $9) IS NULL FROM upd`

// send runs the batch as one statement (casBatchSQL, or one of a batch
// of one's: sendOne).
func (c *committer) send(live []*casJob) ([]casResult, error) {
	n := len(live)
	if n == 1 {
		return c.sendOne(context.Background(), live[0])
	}
	var (
		idx, lens, prevLens   = make([]int32, n), make([]int32, n), make([]int32, n)
		ids, heads, prevs, ev = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		fids, fepochs         = make([]string, n), make([]int64, n)
		segIdx, firsts, ns    []int32
		datas                 [][]byte
	)
	for i, j := range live {
		idx[i], ids[i], heads[i], lens[i] = int32(i), string(j.id), string(j.head), int32(j.len)
		prevs[i], prevLens[i], ev[i] = string(j.prev), int32(j.prevLen), j.eventJSON
		fids[i], fepochs[i] = j.fenceArgs()
		for r := range j.rows.firsts {
			segIdx = append(segIdx, int32(i))
			firsts = append(firsts, int32(j.rows.firsts[r]))
			ns = append(ns, int32(j.rows.ns[r]))
			datas = append(datas, j.rows.datas[r])
		}
	}
	return c.collect(context.Background(), n, casBatchSQL, idx, ids, heads, lens, prevs, prevLens, ev, segIdx, firsts, ns, datas, fids, fepochs)
}

// fenceArgs are the append's fence as statement arguments ("" for none).
func (a *casAppend) fenceArgs() (string, int64) {
	if a.fence == nil {
		return "", 0
	}
	return string(a.fence.Session), a.fence.Epoch
}

// collect runs a batch statement and reads which positions moved. The
// context of a batch of several is not a job's: ending it early would fail
// the other jobs.
func (c *committer) collect(ctx context.Context, n int, sql string, args ...any) ([]casResult, error) {
	rows, err := c.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	defer rows.Close()
	results := make([]casResult, n)
	for rows.Next() {
		var i int32
		var r casResult
		if err := rows.Scan(&i, &r.lane, &r.compactFrom, new(bool)); err != nil {
			return nil, fmt.Errorf("append: %w", err)
		}
		if i < 0 || int(i) >= n {
			return nil, fmt.Errorf("append: the server returned batch position %d of %d", i, n)
		}
		r.ok = true
		results[i] = r
	}
	if err := rows.Err(); err != nil {
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
