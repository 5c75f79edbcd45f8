package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// liveStats counts a run's steps, tool calls and tokens as the store
// commits them, for the progress line of a run on a terminal.
type liveStats struct {
	mu               sync.Mutex
	steps, toolCalls int
	tokens           int64
	seen             map[session.ChunkID]bool
	lens             map[session.ID]int
}

// String is the counts in a line.
func (l *liveStats) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d %s, %d tool %s, %d tokens",
		l.steps, plural(l.steps, "step", "steps"), l.toolCalls, plural(l.toolCalls, "call", "calls"), l.tokens)
}

// add counts the chunks a commit added; a chunk seen on another branch
// (a fork's or merge's copy) counts once.
func (l *liveStats) add(ctx context.Context, st store.Store, ev store.Event) {
	from, known := l.lens[ev.ID]
	if !known {
		from = max(ev.Len-64, 0) // a new session: its first chunks are mostly its parent's
	}
	l.lens[ev.ID] = ev.Len
	if from >= ev.Len {
		return
	}
	cs, err := st.Range(ctx, ev.ID, from, ev.Len)
	if err != nil {
		return // progress only: a chunk missed here is in the outcome
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		if l.seen[c.ID] || (c.Origin != "" && l.seen[c.Origin]) {
			continue
		}
		l.seen[c.ID] = true
		switch {
		case c.ModelCall != nil:
			l.steps++
			l.tokens += c.ModelCall.Usage.InputTokens + c.ModelCall.Usage.OutputTokens
		case c.ToolResult != nil:
			l.toolCalls++
		}
	}
}

// watchRun counts what the store commits from now on until stop, which
// returns once every commit made before it is counted.
func watchRun(ctx context.Context, st store.Store) (l *liveStats, stop func(), err error) {
	wctx, cancel := context.WithCancel(ctx)
	events, err := st.Watch(wctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	l = &liveStats{seen: map[session.ChunkID]bool{}, lens: map[session.ID]int{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events { // closed once cancelled, after what it holds
			if ev.Labels && !ev.Missed {
				continue // a label write: no new chunks
			}
			l.add(context.WithoutCancel(ctx), st, ev)
		}
	}()
	return l, func() { cancel(); <-done }, nil
}

// live starts counting a run's progress when stderr is a terminal (and
// the output is not JSON); live is nil otherwise. stop ends the count.
func (a *app) live(ctx context.Context, rt *rath.Runtime) (live func() string, stop func()) {
	if a.jsonOut || !a.terminal() {
		return nil, func() {}
	}
	l, stop, err := watchRun(ctx, rt.Store)
	if err != nil {
		return nil, func() {} // a store that cannot be watched runs without the counts
	}
	return l.String, stop
}
