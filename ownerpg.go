package rath

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/openrath/rath/session"
)

// Ownership by advisory lock (a PostgreSQL store, shared by processes on
// many machines). The owner holds a session-level advisory lock, keyed by
// the run, for as long as it runs the run, on a connection of its own (one
// per runtime, holding the locks of all its runs). The server drops the
// locks when that connection ends: at once when the
// owner's process dies (its kernel closes the socket), within about 25 s
// when its machine vanishes (TCP keepalives the connection asks the server
// for). Whether the lock is held is read from pg_locks, which knows every
// client of the server: no process is judged from another machine's point
// of view. The owner pings its connection and, if it broke, reconnects
// and locks again (saying so in its record); if another process holds the
// lock by then, the run was taken over and this owner stops.
//
// A server restart drops every lock at once. A lock taken before the
// server's start and not held now is trusted to mean a gone owner only
// once the server has been up for restartGrace: a live owner locks again
// well within it.

// restartGrace is how long after a server start a missing lock taken
// before it is not yet taken for a gone owner.
const restartGrace = 30 * time.Second

// pgPing is how often an owner checks its lock connection.
const pgPing = 2 * time.Second

// pooled is a store on a PostgreSQL pool.
type pooled interface{ Pool() *pgxpool.Pool }

// runKey is the advisory lock key of a run: 63 bits of a hash of its id
// (the high half, as pg_locks shows it, stays a positive 32-bit number).
func runKey(run session.ID) int64 {
	h := fnv.New64a()
	h.Write([]byte("rath.run/" + string(run)))
	return int64(h.Sum64() >> 1)
}

// pgOwner holds the advisory locks of a runtime's runs, all on one
// connection of its own (a lock per run, not a connection per run: a
// process running many runs at once uses one connection for them all).
type pgOwner struct {
	cfg *pgx.ConnConfig

	mu      sync.Mutex
	cn      *pgx.Conn // nil while no run is held
	held    map[int64]*pgLock
	stop    chan struct{}
	stopped chan struct{}
}

// pgLock is one run's advisory lock, held by this process.
type pgLock struct {
	o      *pgOwner
	key    int64
	since  time.Time
	relock func(since time.Time) // records a new lock in the run's owner record
	lostCh chan struct{}
}

// pgOwner returns the runtime's holder of advisory locks, made on first
// use.
func (r *Runtime) pgOwner(pool *pgxpool.Pool) *pgOwner {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pg == nil {
		r.pg = newPGOwner(pool)
	}
	return r.pg
}

// newPGOwner prepares the lock connection's settings from the store's
// pool: its own application name, and TCP keepalives so that the server
// notices a vanished machine in about 25 s.
func newPGOwner(pool *pgxpool.Pool) *pgOwner {
	cfg := pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "rath run owner"
	cfg.RuntimeParams["tcp_keepalives_idle"] = "10"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "5"
	cfg.RuntimeParams["tcp_keepalives_count"] = "3"
	return &pgOwner{cfg: cfg, held: map[int64]*pgLock{}}
}

// lock takes run's advisory lock without waiting: ErrRunLive if any
// connection holds it, this process's own included.
func (o *pgOwner) lock(ctx context.Context, run session.ID) (*pgLock, error) {
	key := runKey(run)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.held[key] != nil {
		return nil, ErrRunLive // advisory locks stack within a connection
	}
	if o.cn == nil || o.cn.IsClosed() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cn, err := pgx.ConnectConfig(cctx, o.cfg)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("rath: lock connection: %w", err)
		}
		o.cn = cn
	}
	since, err := o.try(ctx, key)
	if err != nil {
		if stop, _ := o.closeIfIdle(); stop != nil {
			close(stop) // the keeper sees it replaced and ends
		}
		return nil, err
	}
	l := &pgLock{o: o, key: key, since: since, lostCh: make(chan struct{})}
	o.held[key] = l
	if o.stop == nil {
		o.stop, o.stopped = make(chan struct{}), make(chan struct{})
		go o.keep(o.stop, o.stopped)
	}
	return l, nil
}

// try takes key on the connection (o.mu held): ErrRunLive if another
// connection holds it. It returns the server's time.
func (o *pgOwner) try(ctx context.Context, key int64) (time.Time, error) {
	var ok bool
	var now time.Time
	if err := o.cn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1), now()`, key).Scan(&ok, &now); err != nil {
		return time.Time{}, fmt.Errorf("rath: advisory lock: %w", err)
	}
	if !ok {
		return time.Time{}, ErrRunLive
	}
	return now.UTC(), nil
}

// unlock gives l up; the last one closes the connection.
func (o *pgOwner) unlock(l *pgLock) error {
	o.mu.Lock()
	if o.held[l.key] != l {
		o.mu.Unlock()
		return nil // lost already
	}
	delete(o.held, l.key)
	var err error
	if o.cn != nil && !o.cn.IsClosed() {
		// Unlocked before the connection closes, if it does: a server
		// frees a closed connection's locks only once its backend has
		// seen the close, and the run may be taken up again at once
		// (resumed after a review, say).
		_, err = o.cn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, l.key)
	}
	stop, stopped := o.closeIfIdle()
	o.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
	if err != nil {
		return fmt.Errorf("rath: advisory unlock: %w", err)
	}
	return nil
}

// closeIfIdle closes the connection when it holds no run (o.mu held), and
// returns the keeper's channels to stop it with, if it runs.
func (o *pgOwner) closeIfIdle() (stop, stopped chan struct{}) {
	if len(o.held) > 0 {
		return nil, nil
	}
	if o.cn != nil {
		_ = o.cn.Close(context.Background())
		o.cn = nil
	}
	stop, stopped = o.stop, o.stopped
	o.stop, o.stopped = nil, nil
	return stop, stopped
}

// keep pings the connection; one that broke is replaced and every lock
// taken again — or given up as lost if another process has it by then.
func (o *pgOwner) keep(stop, stopped chan struct{}) {
	defer close(stopped)
	t := time.NewTicker(pgPing)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		o.mu.Lock()
		if o.stop != stop { // stopped while it waited
			o.mu.Unlock()
			return
		}
		o.check()
		if len(o.held) == 0 { // every lock was lost
			o.closeIfIdle()
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
	}
}

// close drops every lock and the connection (the runtime closes).
func (o *pgOwner) close() {
	o.mu.Lock()
	clear(o.held)
	stop, stopped := o.closeIfIdle()
	o.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

// check is one round of keep (o.mu held).
func (o *pgOwner) check() {
	ctx, cancel := context.WithTimeout(context.Background(), pgPing)
	defer cancel()
	if o.cn != nil && !o.cn.IsClosed() && o.cn.Ping(ctx) == nil {
		return
	}
	if o.cn != nil {
		_ = o.cn.Close(ctx)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	cn, err := pgx.ConnectConfig(cctx, o.cfg)
	if err != nil {
		o.cn = nil // try again next round
		return
	}
	o.cn = cn
	for key, l := range o.held {
		since, err := o.try(cctx, key)
		switch {
		case errors.Is(err, ErrRunLive):
			delete(o.held, key)
			close(l.lostCh)
		case err == nil:
			l.since = since
			if l.relock != nil {
				l.relock(since)
			}
		}
	}
}

func (l *pgLock) record() Owner {
	return Owner{Lock: LockPostgres, Key: l.key, Since: l.since}
}

func (l *pgLock) lost() <-chan struct{} { return l.lostCh }

// onRelock has the lock call fn with the new lock's time whenever it
// takes the lock again.
func (l *pgLock) onRelock(fn func(since time.Time)) {
	l.o.mu.Lock()
	l.relock = fn
	l.o.mu.Unlock()
}

func (l *pgLock) release() error { return l.o.unlock(l) }

// heldRunLocksSQL lists the advisory locks held in the store's database,
// with the server's start and now.
const heldRunLocksSQL = `SELECT coalesce(array_agg((classid::bigint << 32) | objid::bigint), '{}'), pg_postmaster_start_time(), now()
	FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

// pgLocks is what the server says of its advisory locks at one moment.
type pgLocks struct {
	held       map[int64]bool
	start, now time.Time
}

func readPGLocks(ctx context.Context, pool *pgxpool.Pool) (*pgLocks, error) {
	var keys []int64
	p := &pgLocks{}
	if err := pool.QueryRow(ctx, heldRunLocksSQL).Scan(&keys, &p.start, &p.now); err != nil {
		return nil, fmt.Errorf("rath: read advisory locks: %w", err)
	}
	p.held = make(map[int64]bool, len(keys))
	for _, k := range keys {
		p.held[k] = true
	}
	return p, nil
}

// probe tells whether o's lock is held.
func (p *pgLocks) probe(o Owner) liveness {
	switch {
	case p.held[o.Key]:
		return alive
	case o.Since.Before(p.start) && p.now.Sub(p.start) < restartGrace:
		return unknown
	}
	return dead
}
