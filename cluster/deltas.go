package cluster

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/session"
)

// Delta is a piece of the text a run's model streams: which agent, which
// step. Deltas are not stored: the step's model call, committed when it
// ends, holds the whole text.
type Delta struct {
	Run   session.ID `json:"run"`
	Agent string     `json:"agent"`
	Step  int        `json:"step"`
	Text  string     `json:"text"`
}

// deltasChannel is the NOTIFY channel of deltas on PostgreSQL.
const deltasChannel = "rath_deltas"

// How a run's deltas are gathered before they are published: at most
// every deltaEvery, in pieces of at most deltaMax bytes (a NOTIFY payload
// is under 8,000 bytes, and JSON may write a byte as six).
const (
	deltaEvery = 100 * time.Millisecond
	deltaMax   = 1000
)

// deltaHub hands deltas to the run event streams of this process: those
// published here (SQLite), or heard on PostgreSQL's channel (which echoes
// this process's own too).
type deltaHub struct {
	mu     sync.Mutex
	subs   map[session.ID]map[chan Delta]struct{}
	listen context.CancelFunc // the PostgreSQL listener, once started
}

// WatchDeltas delivers run's deltas until ctx ends. A reader that falls
// behind loses deltas, never blocks the run. Only workers with
// Options.Deltas publish them; on SQLite only those of this process are
// heard.
func (c *Cluster) WatchDeltas(ctx context.Context, run session.ID) (<-chan Delta, error) {
	ch := make(chan Delta, 256)
	h := &c.deltas
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[session.ID]map[chan Delta]struct{}{}
	}
	if h.subs[run] == nil {
		h.subs[run] = map[chan Delta]struct{}{}
	}
	h.subs[run][ch] = struct{}{}
	if c.pg != nil && h.listen == nil {
		lctx, cancel := context.WithCancel(context.Background())
		h.listen = cancel
		go c.listenDeltas(lctx)
	}
	h.mu.Unlock()
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		delete(h.subs[run], ch)
		if len(h.subs[run]) == 0 {
			delete(h.subs, run)
		}
		h.mu.Unlock()
	}()
	return ch, nil
}

// deliver hands d to the streams of its run in this process.
func (h *deltaHub) deliver(d Delta) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[d.Run] {
		select {
		case ch <- d:
		default: // a slow reader loses deltas
		}
	}
}

func (h *deltaHub) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listen != nil {
		h.listen()
	}
}

// listenDeltas hears the deltas of every process on PostgreSQL until ctx
// ends, listening again after a lost connection.
func (c *Cluster) listenDeltas(ctx context.Context) {
	for ctx.Err() == nil {
		err := c.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("deltas: listening again", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *Cluster) listenOnce(ctx context.Context) error {
	conn, err := c.pg.Pool().Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+deltasChannel); err != nil {
		return err
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx)) // not back to the pool still listening
			return err
		}
		var d Delta
		if json.Unmarshal([]byte(n.Payload), &d) == nil {
			c.deltas.deliver(d)
		}
	}
}

// publishDelta sends d to the run's streams: by NOTIFY on PostgreSQL
// (every process hears it, this one too), else to this process's.
func (c *Cluster) publishDelta(ctx context.Context, d Delta) {
	if c.pg == nil {
		c.deltas.deliver(d)
		return
	}
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	if _, err := c.pg.Pool().Exec(ctx, "SELECT pg_notify($1, $2)", deltasChannel, string(b)); err != nil {
		c.log.Warn("deltas: notify", "run", d.Run, "err", err)
	}
}

// deltaBuffer gathers one run's streamed text during a slice and publishes
// it every deltaEvery: a sink for agent.WithEvents.
type deltaBuffer struct {
	c    *Cluster
	run  session.ID
	mu   sync.Mutex
	open *Delta // the text gathered since the last publish
	out  []Delta
	stop chan struct{}
	done chan struct{}
}

// withDeltas returns ctx whose agents' streamed text is published for run,
// and the function that publishes what is left and stops (once, however
// often called); with
// Options.Deltas off, ctx as it is.
func (c *Cluster) withDeltas(ctx context.Context, run session.ID) (context.Context, func()) {
	if !c.opts.Deltas {
		return ctx, func() {}
	}
	b := &deltaBuffer{c: c, run: run, stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop(context.WithoutCancel(ctx))
	var once sync.Once
	return agent.WithEvents(ctx, b.add), func() { once.Do(func() { close(b.stop); <-b.done }) }
}

// add takes one agent event: text is gathered, by agent and step.
func (b *deltaBuffer) add(name string, ev agent.Event) {
	if ev.Kind != agent.TextDelta || ev.Delta == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open != nil && (b.open.Agent != name || b.open.Step != ev.Step || len(b.open.Text)+len(ev.Delta) > deltaMax) {
		b.out = append(b.out, *b.open)
		b.open = nil
	}
	if b.open == nil {
		b.open = &Delta{Run: b.run, Agent: name, Step: ev.Step}
	}
	b.open.Text += ev.Delta
}

func (b *deltaBuffer) loop(ctx context.Context) {
	defer close(b.done)
	t := time.NewTicker(deltaEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.flush(ctx)
		case <-b.stop:
			b.flush(ctx)
			return
		}
	}
}

// flush publishes what was gathered.
func (b *deltaBuffer) flush(ctx context.Context) {
	b.mu.Lock()
	out := b.out
	if b.open != nil {
		out = append(out, *b.open)
	}
	b.out, b.open = nil, nil
	b.mu.Unlock()
	for _, d := range out {
		b.c.publishDelta(ctx, d)
	}
}
