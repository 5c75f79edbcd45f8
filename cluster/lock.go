package cluster

import (
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/session"
)

// Liveness by database session (PostgreSQL). Each worker holds an advisory
// lock, keyed by its session, on a connection of its own for as long as
// it lives. A worker process that dies, on any host, closes that
// connection and the server drops the lock at once; a peer that finds a
// worker's lock gone, and its heartbeat late, takes it for dead without
// waiting DeadAfter. The server also drops every lock when it restarts,
// so a peer trusts a missing lock only once it has reached the store
// without a break for lockGrace heartbeats itself (live workers lock again
// on their first beat after the server is back); until then the heartbeat
// decides, as on SQLite.

// lockGrace is how many heartbeats a worker must have reached the store
// without a break before it trusts that a missing lock means a dead peer.
const lockGrace = 5

// lockKey is the advisory lock key of a worker's session: 63 bits of its
// hash (so that its high half, as pg_locks shows it, stays a positive
// 32-bit number).
func lockKey(s session.ID) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() >> 1)
}

// heldLocksSQL lists the keys of the bigint advisory locks held in the
// store's database.
const heldLocksSQL = `SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks
	WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

// liveLock is a worker's advisory lock and its connection.
type liveLock struct {
	key int64
	mu  sync.Mutex
	cfg *pgx.ConnConfig
	cn  *pgx.Conn
}

// hold makes sure the lock is held: it checks the connection and, if it
// is gone (the server restarted, the network broke), connects and locks
// again.
func (l *liveLock) hold(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cn != nil && !l.cn.IsClosed() {
		if err := l.cn.Ping(ctx); err == nil {
			return nil
		}
		_ = l.cn.Close(context.WithoutCancel(ctx))
		l.cn = nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cn, err := pgx.ConnectConfig(cctx, l.cfg)
	if err != nil {
		return err
	}
	if _, err := cn.Exec(cctx, `SELECT pg_advisory_lock($1)`, l.key); err != nil {
		_ = cn.Close(context.WithoutCancel(ctx))
		return err
	}
	l.cn = cn
	return nil
}

func (l *liveLock) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cn != nil {
		_ = l.cn.Close(context.Background())
		l.cn = nil
	}
}

// heldLocks returns the advisory locks held now, or nil where the store
// has none (SQLite).
func (c *Cluster) heldLocks(ctx context.Context) (map[int64]bool, error) {
	if c.pg == nil {
		return nil, nil
	}
	rows, err := c.pg.Pool().Query(ctx, heldLocksSQL)
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, err
	}
	held := make(map[int64]bool, len(keys))
	for _, k := range keys {
		held[k] = true
	}
	return held, nil
}

// sessionGone reports whether worker w, by its lock, is dead: it holds
// one, the lock is not held, and its heartbeat is late (a live worker
// re-locks within a beat of reconnecting).
func (c *Cluster) sessionGone(w WorkerInfo, held map[int64]bool, now time.Time) bool {
	return held != nil && w.Lock != 0 && !held[w.Lock] && now.Sub(w.Beat) > 2*c.opts.Heartbeat
}
