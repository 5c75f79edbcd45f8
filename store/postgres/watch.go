package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/store"
)

// channel is the NOTIFY channel every commit and label write announces
// itself on. Its payload is store.Event's JSON, which the listener decodes:
// a commit's is {"id","head","len"} (eventJSON); a label write's adds
// "labels": true (labelNotify).
const channel = "rath_commits"

// labelNotify is the SQL expression that announces a label write of the
// session in row a (a row of rath.sessions, or of a selection of its id,
// head and len), for a statement or transaction that writes its labels to
// use: the notification is delivered when the transaction commits, and not
// at all if it rolls back. Its payload, under 200 bytes (a NOTIFY payload
// must be under 8000), is
//
//	{"id" : "<session id>", "head" : "<head chunk id>", "len" : <length>, "labels" : true}
//
// (json_build_object's spacing). It returns void; "labelNotify IS NULL"
// makes a column of it.
const labelNotify = `pg_notify('` + channel + `', json_build_object('id', a.id, 'head', a.head, 'len', a.len, 'labels', true)::text)`

// watchStartTimeout bounds how long the first Watch waits for the listening
// connection before it reports why there is none.
const watchStartTimeout = 10 * time.Second

// listener owns one dedicated connection (not a pooled one: LISTEN belongs
// to a session, and a pooled connection is shared) that LISTENs and fans
// notifications out to the store's Hub. It starts with the first Watch,
// reconnects after an error (marking every watcher's next event Missed, as
// notifications sent in between are gone), and stops on Close.
type listener struct {
	once   sync.Once
	ready  chan struct{} // closed once the first LISTEN succeeded
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	lastErr error
}

// Watch implements store.Store. The first call returns once the listening
// connection is up, so every commit that returns after Watch is delivered.
func (s *Store) Watch(ctx context.Context) (<-chan store.Event, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	l := &s.lis
	l.mu.Lock()
	l.once.Do(func() {
		lctx, cancel := context.WithCancel(context.Background())
		l.ready, l.cancel, l.done = make(chan struct{}), cancel, make(chan struct{})
		go s.listen(lctx)
	})
	ready := l.ready
	l.mu.Unlock()
	if ready == nil { // Close ran first
		return nil, fmt.Errorf("postgres store %s: %w", s.name, store.ErrClosed)
	}
	timer := time.NewTimer(watchStartTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return s.hub.Subscribe(ctx), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		l.mu.Lock()
		defer l.mu.Unlock()
		return nil, fmt.Errorf("postgres store %s: watch: no LISTEN connection after %v: %w", s.name, watchStartTimeout, l.lastErr)
	}
}

func (s *Store) listen(ctx context.Context) {
	l := &s.lis
	defer close(l.done)
	first := true
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
		err := s.listenOnce(ctx, func() {
			if first {
				first = false
				close(l.ready)
			} else {
				// Commits notified while no connection listened are lost:
				// every watcher's next event says so.
				s.hub.MarkMissed()
			}
			backoff = 100 * time.Millisecond
		})
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		l.lastErr = err
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// listenOnce connects, LISTENs, calls up, and publishes notifications until
// the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, up func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	up()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var ev store.Event
		if json.Unmarshal([]byte(n.Payload), &ev) != nil || ev.ID == "" {
			continue // not ours: someone else NOTIFYing on the channel
		}
		s.hub.Publish(ev)
	}
}

// stop ends the listener, if it was started, and waits for it.
func (l *listener) stop() {
	l.mu.Lock()
	l.once.Do(func() {}) // no listener may start after this
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
