package backend

import (
	"context"
	"sync"

	"github.com/openrath/rath/store"
)

// Hub fans commit events out to watchers for backends. A watcher whose
// buffer is full misses events rather than blocking the writer; its next
// delivered event has Missed set. A backend that may itself have lost
// events (while its notification connection reconnects, say) says so with
// MarkMissed.
type Hub struct {
	mu   sync.Mutex
	subs map[*watcher]struct{}
}

// watcherBuffer is how many undelivered events a watcher may fall behind.
const watcherBuffer = 256

type watcher struct {
	ch     chan store.Event
	done   chan struct{} // closed when the subscription ends
	missed bool
}

// Subscribe returns a channel of events until ctx ends or CloseAll is
// called; then it is closed.
func (h *Hub) Subscribe(ctx context.Context) <-chan store.Event {
	w := &watcher{ch: make(chan store.Event, watcherBuffer), done: make(chan struct{})}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*watcher]struct{}{}
	}
	h.subs[w] = struct{}{}
	h.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
			h.mu.Lock()
			h.end(w)
			h.mu.Unlock()
		case <-w.done: // CloseAll ended it
		}
	}()
	return w.ch
}

// end removes w and closes its channel, once; h.mu is held.
func (h *Hub) end(w *watcher) {
	if _, ok := h.subs[w]; ok {
		delete(h.subs, w)
		close(w.ch)
		close(w.done)
	}
}

// Publish delivers events to every watcher without blocking. An event keeps
// its own Missed and also gets it when the watcher dropped events before.
func (h *Hub) Publish(evs ...store.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.subs {
		for _, ev := range evs {
			ev.Missed = ev.Missed || w.missed
			select {
			case w.ch <- ev:
				w.missed = false
			default:
				w.missed = true
			}
		}
	}
}

// MarkMissed makes every current watcher's next event carry Missed: the
// backend may have lost events it cannot name.
func (h *Hub) MarkMissed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.subs {
		w.missed = true
	}
}

// CloseAll ends every subscription (for a store's Close).
func (h *Hub) CloseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.subs {
		h.end(w)
	}
}
