package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openrath/rath/store"
)

// Watchers see other processes' writes. The writer publishes its own
// events; what other connections to the file write (other processes, or
// other Stores in this one) reaches watchers through the change log (see
// changelog.go). While a Store has at least one watcher, a poller holds a
// lease that makes other stores' writers log, and asks a connection of its
// own for PRAGMA data_version every pollInterval — a number that moves
// only when another connection committed, and costs no read of the
// database. When it moved, the poller reads the change-log rows after the
// last it saw and publishes their events, skipping the rows this store's
// own writer logged. Without watchers nothing polls, and the lease is
// given back.

// pollInterval is how often a watched store looks for other connections'
// commits: the most a watcher waits, beyond the write itself, for another
// process's event.
const pollInterval = 50 * time.Millisecond

// pollRows is how many change-log rows one query reads.
const pollRows = 64

// watchState counts a Store's watchers and runs its poller while there
// are any.
type watchState struct {
	mu   sync.Mutex
	n    int                // watchers
	stop context.CancelFunc // ends the running poller; nil when none runs
	wg   sync.WaitGroup     // running pollers

	errs atomic.Int64 // failed polls (for tests)
}

// Watch implements store.Store.
func (s *Store) Watch(ctx context.Context) (<-chan store.Event, error) {
	ws := &s.watch
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return s.hub.Subscribe(ctx), nil // ends at once; nothing to poll for
	}
	var p *poller
	if ws.n == 0 {
		// A poller stopped by the last watcher may still be giving its
		// lease back: let it, before this store takes a new one.
		ws.wg.Wait()
		var err error
		if p, err = s.newPoller(ctx); err != nil {
			return nil, fmt.Errorf("sqlite store %s: watch: %w", s.path, err)
		}
	}
	// Subscribe before the poller runs, so that nothing it finds after its
	// starting point is published to no one.
	ch := s.hub.Subscribe(ctx)
	if p != nil {
		pctx, cancel := context.WithCancel(context.Background())
		ws.stop = cancel
		ws.wg.Add(1)
		go func() {
			defer ws.wg.Done()
			p.run(pctx)
		}()
	}
	ws.n++
	context.AfterFunc(ctx, s.unwatch)
	return ch, nil
}

// unwatch ends one watcher; the last one stops the poller.
func (s *Store) unwatch() {
	ws := &s.watch
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.n--
	if ws.n == 0 && ws.stop != nil {
		ws.stop()
		ws.stop = nil
	}
}

// stopWatching stops the poller and waits for it (for Close; s.closed is
// already set, so no Watch starts another).
func (s *Store) stopWatching() {
	ws := &s.watch
	ws.mu.Lock()
	if ws.stop != nil {
		ws.stop()
		ws.stop = nil
	}
	ws.mu.Unlock()
	ws.wg.Wait()
}

// poller reads the change log for one run of polling.
type poller struct {
	s       *Store
	db      *sql.DB // its own, of one connection, closed when it stops
	conn    *sql.Conn
	version int64 // data_version when the log was last read through
	last    int64 // the last change-log row read
	until   int64 // when its lease runs out (Unix µs)
	renewed time.Time
}

// newPoller opens the poller's connection, takes its lease, then its
// starting point: the change log's last row and data_version now. Every
// write transaction after the lease logs its events, and every one before
// it is at or before the starting point.
func (s *Store) newPoller(ctx context.Context) (*poller, error) {
	// A poll waits at most a second for a locked file; it fails then, and
	// is tried again on the next tick.
	db, err := sql.Open("sqlite", "file:"+url.PathEscape(s.path)+"?_pragma=busy_timeout(1000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	p := &poller{s: s, db: db}
	if err := p.start(ctx); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *poller) start(ctx context.Context) (err error) {
	if p.conn, err = p.db.Conn(ctx); err != nil {
		return err
	}
	if err := p.renew(ctx); err != nil {
		return err
	}
	if err := p.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&p.version); err != nil {
		return err
	}
	return p.conn.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM changes`).Scan(&p.last)
}

// renew writes the lease. One that ran out before it was renewed let
// writers stop logging: watchers are told they may have missed events.
func (p *poller) renew(ctx context.Context) error {
	now := time.Now()
	until := now.Add(leaseTTL).UnixMicro()
	if _, err := p.conn.ExecContext(ctx, `INSERT INTO watchers(origin, until) VALUES(?, ?)
		ON CONFLICT(origin) DO UPDATE SET until = excluded.until`, p.s.origin, until); err != nil {
		return err
	}
	if p.until != 0 && now.UnixMicro() >= p.until {
		p.s.hub.MarkMissed()
	}
	p.until, p.renewed = until, now
	return nil
}

// close gives the lease back (if this fails, it runs out) and the
// connection.
func (p *poller) close() {
	if p.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = p.conn.ExecContext(ctx, `DELETE FROM watchers WHERE origin = ?`, p.s.origin)
		cancel()
		p.conn.Close()
	}
	p.db.Close()
}

// run polls every pollInterval until ctx ends, then releases the
// connection. A failed poll (the file locked, say) is retried on the next
// tick.
func (p *poller) run(ctx context.Context) {
	defer p.close()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := p.poll(ctx)
		if time.Since(p.renewed) >= leaseRenew {
			err = errors.Join(err, p.renew(ctx))
		}
		if err != nil && ctx.Err() == nil {
			p.s.watch.errs.Add(1)
		}
	}
}

// poll publishes the events of the change-log rows other stores wrote
// since the last poll, if data_version says any connection wrote.
func (p *poller) poll(ctx context.Context) error {
	var v int64
	if err := p.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return err
	}
	if v == p.version {
		return nil
	}
	for first := true; ; first = false {
		n, err := p.readRows(ctx)
		if err != nil {
			return err
		}
		if n == 0 && first {
			reset, err := p.checkReset(ctx)
			if err != nil {
				return err
			}
			if reset {
				continue
			}
		}
		if n < pollRows {
			break
		}
	}
	p.version = v
	return nil
}

// checkReset notices a change log that went back (its table was dropped
// and made again, say): none of its rows was read, since all are below
// the last one read. The poller starts over at its start, and watchers are
// told they may have missed events.
func (p *poller) checkReset(ctx context.Context) (bool, error) {
	var last int64
	if err := p.conn.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM changes`).Scan(&last); err != nil {
		return false, err
	}
	if last >= p.last {
		return false, nil
	}
	p.last = 0
	p.s.hub.MarkMissed()
	return true, nil
}

// readRows publishes up to pollRows rows after p.last and says how many
// it read.
func (p *poller) readRows(ctx context.Context) (int, error) {
	rows, err := p.conn.QueryContext(ctx, `SELECT seq, origin, events FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, p.last, pollRows)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	hub := &p.s.hub
	n := 0
	for rows.Next() {
		var seq, origin int64
		var data []byte
		if err := rows.Scan(&seq, &origin, &data); err != nil {
			return n, err
		}
		n++
		if seq != p.last+1 {
			hub.MarkMissed() // rows were pruned before this poll read them
		}
		p.last = seq
		if origin == p.s.origin {
			continue // the writer published these itself
		}
		evs, err := decodeEvents(data)
		if err != nil {
			hub.MarkMissed() // a damaged row: its events are lost
			continue
		}
		hub.Publish(evs...)
	}
	return n, rows.Err()
}
