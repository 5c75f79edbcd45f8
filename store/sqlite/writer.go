package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// The writer owns the only write connection. Every mutation is a job; the
// writer runs whatever jobs are queued as one transaction (group commit), so
// many concurrent sessions share one fsync. A job's failure (a conflict,
// say) undoes only that job: a commit (a light job) decides before it
// writes, and any other job runs inside its own savepoint.

// maxBatch bounds one group commit.
const maxBatch = 512

type job struct {
	ctx context.Context
	fn  func(tx *wtx, evs *[]store.Event) error
	// early jobs are answered as soon as they ran, before the transaction
	// commits (async and exit durability).
	early bool
	// light jobs run without a savepoint: they decide to fail before they
	// write, and a write error aborts the whole batch (see errAbort).
	light bool
	done  chan error
}

type writer struct {
	conn *sql.Conn // the write connection, held for the writer's life
	hub  *backend.Hub
	jobs chan *job

	closeOnce sync.Once
	quit      chan struct{}
	stopped   chan struct{}

	mu     sync.Mutex
	failed error // a background commit failed: acknowledged work may be lost

	stmts map[string]*sql.Stmt // prepared on conn; used only by the loop goroutine

	// heads caches stored heads of sessions, so a commit need not read its
	// session's row. Only the loop goroutine uses it. It is dropped whenever
	// another connection (another process) has written the database, which
	// PRAGMA data_version reveals.
	heads       map[session.ID]*headRow
	dataVersion int64
	pending     []segRow     // appends queued in the current batch (see pending.go)
	deletes     []tailDelete // compacted segments to delete before them
	tailBytes   int          // held in the heads' tails (see tail.go)

	origin   int64  // names this store in the change log (see changelog.go)
	logUntil int64  // log changes until this time (Unix µs): another store watches
	logBuf   []byte // the batch's encoded events, reused
}

type headRow struct {
	num     int64
	head    session.ChunkID
	len     int
	compact int
	tail    [][]byte // the segments of chunks [compact, len), if known
	known   bool
}

// errAbort marks a write error in a light job: the batch's transaction can
// no longer be trusted and is rolled back whole.
var errAbort = errors.New("sqlite store: batch aborted")

func abort(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", errAbort, err)
}

// newWriter starts the writer on a connection of db, which it holds; it
// logs its events under origin (see changelog.go).
func newWriter(ctx context.Context, db *sql.DB, hub *backend.Hub, origin int64) (*writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	stmts, err := prepareHot(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	w := &writer{conn: conn, hub: hub, jobs: make(chan *job, maxBatch), quit: make(chan struct{}), stopped: make(chan struct{}),
		stmts: stmts, heads: map[session.ID]*headRow{}, origin: origin}
	go w.loop()
	return w, nil
}

// setFailed makes the writer refuse all further work.
func (w *writer) setFailed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed == nil {
		w.failed = err
	}
}

// do runs fn in the writer and waits for its outcome.
func (w *writer) do(ctx context.Context, early bool, fn func(tx *wtx, evs *[]store.Event) error) error {
	return w.submit(ctx, &job{ctx: ctx, fn: fn, early: early, done: make(chan error, 1)})
}

func (w *writer) submit(ctx context.Context, j *job) error {
	if err := w.err(); err != nil {
		return err
	}
	select {
	case w.jobs <- j:
	case <-w.quit:
		return store.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-j.done:
		return err
	case <-w.stopped:
		select {
		case err := <-j.done:
			return err
		default:
			return store.ErrClosed
		}
	case <-ctx.Done():
		// The job may still run; commits are idempotent, so a retry is safe.
		return ctx.Err()
	}
}

// flush waits until everything queued before it is committed.
func (w *writer) flush(ctx context.Context) error {
	return w.do(ctx, false, func(*wtx, *[]store.Event) error { return nil })
}

func (w *writer) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

func (w *writer) loop() {
	defer close(w.stopped)
	batch := make([]*job, 0, maxBatch)
	for {
		select {
		case j := <-w.jobs:
			batch = append(batch[:0], j)
		case <-w.quit:
			// Run what was queued before Close, then stop.
			for {
				select {
				case j := <-w.jobs:
					w.run([]*job{j})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case j := <-w.jobs:
				batch = append(batch, j)
			default:
				break fill
			}
		}
		w.run(batch)
	}
}

func (w *writer) run(batch []*job) {
	results := make([]error, len(batch))
	tx := &wtx{w: w}
	if err := tx.begin(); err != nil {
		for _, j := range batch {
			j.done <- fmt.Errorf("sqlite store: begin: %w", err)
		}
		return
	}
	var v int64
	if err := tx.QueryRow(`PRAGMA data_version`).Scan(&v); err != nil || v != w.dataVersion {
		w.forget()
		w.dataVersion = v
		tx.readWatchers()
	}
	var events []store.Event
	anyEarly := false
	answered := make([]bool, len(batch))
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			results[i] = err
		} else {
			results[i] = runJob(tx, j, &events)
		}
		if errors.Is(results[i], errAbort) {
			w.abortBatch(tx, batch, answered, results[i], anyEarly)
			return
		}
		if j.early {
			anyEarly = anyEarly || results[i] == nil
			j.done <- results[i]
			answered[i] = true
		}
	}
	if len(events) > 0 && w.logging() {
		if err := tx.logChanges(events); err != nil {
			w.abortBatch(tx, batch, answered, abort(err), anyEarly)
			return
		}
	}
	if err := tx.flush(); err != nil {
		w.abortBatch(tx, batch, answered, abort(err), anyEarly)
		return
	}
	cerr := tx.commit()
	if cerr != nil {
		w.forget()
		cerr = fmt.Errorf("sqlite store: commit: %w", cerr)
		if anyEarly {
			w.setFailed(fmt.Errorf("%w (commits acknowledged in async mode were lost; reopen the store)", cerr))
		}
	}
	for i, j := range batch {
		if !j.early {
			if results[i] == nil {
				results[i] = cerr
			}
			j.done <- results[i]
		}
	}
	if cerr == nil && len(events) > 0 {
		w.hub.Publish(events...)
	}
}

// abortBatch rolls back a batch after a write error and fails every job
// that has not been answered yet.
func (w *writer) abortBatch(tx *wtx, batch []*job, answered []bool, cause error, anyEarly bool) {
	_ = tx.rollback()
	w.forget()
	w.pending = w.pending[:0]
	w.deletes = w.deletes[:0]
	if anyEarly {
		w.setFailed(fmt.Errorf("%w (commits acknowledged in async mode were lost; reopen the store)", cause))
	}
	for i, j := range batch {
		if !answered[i] {
			j.done <- cause
		}
	}
}

// runJob runs one job; unless it is light, inside a savepoint so that its
// writes are undone if it fails.
func runJob(tx *wtx, j *job, events *[]store.Event) error {
	if !j.light {
		// Heavier jobs read and write freely: give them every queued append.
		if err := tx.flush(); err != nil {
			return abort(err)
		}
	}
	if j.light {
		var evs []store.Event
		err := j.fn(tx, &evs)
		if err == nil {
			*events = append(*events, evs...)
		}
		return err
	}
	if _, err := tx.Exec(`SAVEPOINT job`); err != nil {
		return err
	}
	var evs []store.Event
	err := j.fn(tx, &evs)
	if err != nil {
		if _, rerr := tx.Exec(`ROLLBACK TO job`); rerr != nil {
			err = errors.Join(err, rerr)
		}
	} else {
		*events = append(*events, evs...)
	}
	if _, rerr := tx.Exec(`RELEASE job`); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// close stops the writer after the queued jobs ran.
func (w *writer) close() {
	w.closeOnce.Do(func() { close(w.quit) })
	<-w.stopped
	closeAll(w.stmts)
	w.conn.Close()
}
