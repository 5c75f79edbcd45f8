package runend

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// parallel is how many sessions are moved and read at once.
const parallel = 8

// work ends one run's sessions: each is moved (if unfinished) and read
// for its model calls, several at a time.
type work struct {
	ctx context.Context
	st  store.Store
	run session.ID
	to  store.Status

	mu    sync.Mutex
	moved int
	calls map[session.ChunkID]bool // the model calls of the run's sessions
	input map[session.ChunkID]bool // the chunks of the run's input as it began
	errs  []error
}

func newWork(ctx context.Context, st store.Store, run session.ID, to store.Status) *work {
	return &work{ctx: ctx, st: st, run: run, to: to, calls: map[session.ChunkID]bool{}, input: map[session.ChunkID]bool{}}
}

// do does each session's work, and reads the run's input, with at most
// parallel at once; it starts no more once one has failed (under a stale
// fence every move fails).
func (w *work) do(infos []store.Info) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	spawn := func(f func() error) {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(); err != nil {
				w.mu.Lock()
				w.errs = append(w.errs, err)
				w.mu.Unlock()
			}
		}()
	}
	spawn(w.readInput)
	for _, info := range infos {
		if info.ID == w.run {
			continue
		}
		if w.err() != nil {
			break
		}
		spawn(func() error { return w.end(info) })
	}
	wg.Wait()
}

func (w *work) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.errs...)
}

// end moves one session of the run to its end, if it is unfinished, and
// notes its model calls.
func (w *work) end(info store.Info) error {
	if unfinished(info.Status) {
		if err := store.MoveTo(w.ctx, w.st, info.ID, w.to); err != nil {
			return fmt.Errorf("end %s: %w", info.ID, err)
		}
		w.mu.Lock()
		w.moved++
		w.mu.Unlock()
	}
	s, err := w.st.Load(w.ctx, info.ID)
	if err != nil {
		return fmt.Errorf("count the steps of %s: %w", info.ID, err)
	}
	var calls []session.ChunkID
	for _, c := range s.All() {
		if c.ModelCall != nil && !c.ModelCall.Aggregate {
			calls = append(calls, c.ID)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range calls {
		w.calls[id] = true
	}
	return nil
}

// readInput notes the chunks the run's input held when the run began (up
// to its runctx.StartLabel head; all of them without it): a run that
// continues a conversation carries the calls of the runs before it.
func (w *work) readInput() error {
	info, err := w.st.Info(w.ctx, w.run)
	if err != nil {
		return fmt.Errorf("read the run's input: %w", err)
	}
	in, err := w.st.Load(w.ctx, w.run)
	if err != nil {
		return fmt.Errorf("read the run's input: %w", err)
	}
	start := session.ChunkID(info.Labels[runctx.StartLabel])
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range in.All() {
		w.input[c.ID] = true
		if c.ID == start {
			break
		}
	}
	return nil
}

// steps counts the run's model calls: each model-call chunk of its
// sessions once, however many sessions share it (forks, derived outputs,
// a resume repeating the record), and none its input began with.
func (w *work) steps() int {
	n := 0
	for id := range w.calls {
		if !w.input[id] {
			n++
		}
	}
	return n
}
