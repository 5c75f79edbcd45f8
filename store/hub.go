package store

import (
	"context"
	"sync"
)

// Hub fans commit events out to watchers for backends. A watcher whose
// buffer is full misses events rather than blocking the writer; its next
// delivered event has Missed set.
type Hub struct {
	mu   sync.Mutex
	subs map[*watcher]struct{}
}

type watcher struct {
	ch     chan Event
	missed bool
}

// Subscribe returns a channel of events until ctx ends; then it is closed.
func (h *Hub) Subscribe(ctx context.Context) <-chan Event {
	w := &watcher{ch: make(chan Event, 256)}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*watcher]struct{}{}
	}
	h.subs[w] = struct{}{}
	h.mu.Unlock()
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		if _, ok := h.subs[w]; ok { // CloseAll may have ended it already
			delete(h.subs, w)
			close(w.ch)
		}
		h.mu.Unlock()
	}()
	return w.ch
}

// Publish delivers events to every watcher without blocking.
func (h *Hub) Publish(evs ...Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.subs {
		for _, ev := range evs {
			ev.Missed = w.missed
			select {
			case w.ch <- ev:
				w.missed = false
			default:
				w.missed = true
			}
		}
	}
}

// CloseAll ends every subscription (for a store's Close).
func (h *Hub) CloseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.subs {
		delete(h.subs, w)
		close(w.ch)
	}
}
