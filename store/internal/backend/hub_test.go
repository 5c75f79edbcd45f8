package backend

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func ev(i int) store.Event {
	return store.Event{ID: session.ID(fmt.Sprint("s", i)), Head: session.ChunkID(fmt.Sprint("h", i)), Len: i}
}

// recv takes the next event, failing if there is none within a second.
func recv(t *testing.T, ch <-chan store.Event) store.Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the subscription ended")
		}
		return e
	case <-time.After(time.Second):
		t.Fatal("no event")
	}
	return store.Event{}
}

// closed waits for ch to be closed, failing on an event or after a second.
func closed(t *testing.T, ch <-chan store.Event) {
	t.Helper()
	select {
	case e, ok := <-ch:
		if ok {
			t.Fatalf("event %+v, want the subscription ended", e)
		}
	case <-time.After(time.Second):
		t.Fatal("the subscription did not end")
	}
}

func empty(t *testing.T, ch <-chan store.Event) {
	t.Helper()
	select {
	case e := <-ch:
		t.Fatalf("unexpected event %+v", e)
	default:
	}
}

func TestHubPublish(t *testing.T) {
	defer goleak.VerifyNone(t)
	var h Hub
	h.Publish(ev(0)) // no watchers: nothing to do
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := h.Subscribe(ctx), h.Subscribe(ctx)
	h.Publish(ev(1), ev(2))
	h.Publish(ev(3))
	for _, ch := range []<-chan store.Event{a, b} {
		for i := 1; i <= 3; i++ {
			if got := recv(t, ch); got != ev(i) {
				t.Fatalf("got %+v, want %+v", got, ev(i))
			}
		}
		empty(t, ch)
	}
	cancel()
	closed(t, a)
	closed(t, b)
}

// A watcher that does not keep up loses events, never blocks Publish, and
// learns of the loss from its next delivered event.
func TestHubMissedOnFullBuffer(t *testing.T) {
	defer goleak.VerifyNone(t)
	var h Hub
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow := h.Subscribe(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range watcherBuffer + 10 {
			h.Publish(ev(i))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a full watcher")
	}
	for i := range watcherBuffer {
		if got := recv(t, slow); got != ev(i) {
			t.Fatalf("got %+v, want %+v", got, ev(i))
		}
	}
	empty(t, slow) // the last 10 were dropped
	other := h.Subscribe(ctx)
	h.Publish(ev(1000))
	if got := recv(t, slow); !got.Missed || got.ID != ev(1000).ID {
		t.Fatalf("after a drop: got %+v, want event 1000 with Missed", got)
	}
	if got := recv(t, other); got != ev(1000) {
		t.Fatalf("a watcher that dropped nothing: got %+v, want %+v without Missed", got, ev(1000))
	}
	h.Publish(ev(1001))
	if got := recv(t, slow); got != ev(1001) {
		t.Fatalf("got %+v, want %+v without Missed", got, ev(1001))
	}
}

func TestHubMarkMissed(t *testing.T) {
	defer goleak.VerifyNone(t)
	var h Hub
	h.MarkMissed() // no watchers: nothing to do
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := h.Subscribe(ctx), h.Subscribe(ctx)
	h.MarkMissed()
	h.Publish(ev(1), ev(2))
	for _, ch := range []<-chan store.Event{a, b} {
		if got := recv(t, ch); !got.Missed || got.ID != ev(1).ID {
			t.Fatalf("got %+v, want event 1 with Missed", got)
		}
		if got := recv(t, ch); got != ev(2) {
			t.Fatalf("got %+v, want %+v without Missed", got, ev(2))
		}
	}
	// A watcher subscribing after MarkMissed missed nothing.
	c := h.Subscribe(ctx)
	h.Publish(ev(3))
	for _, ch := range []<-chan store.Event{a, b, c} {
		if got := recv(t, ch); got != ev(3) {
			t.Fatalf("got %+v, want %+v without Missed", got, ev(3))
		}
	}
	// An event's own Missed is kept.
	e := ev(4)
	e.Missed = true
	h.Publish(e)
	for _, ch := range []<-chan store.Event{a, b, c} {
		if got := recv(t, ch); got != e {
			t.Fatalf("got %+v, want %+v", got, e)
		}
	}
}

// Each subscription ends with its own context; the others go on.
func TestHubUnsubscribe(t *testing.T) {
	defer goleak.VerifyNone(t)
	var h Hub
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	a, b := h.Subscribe(ctxA), h.Subscribe(ctxB)
	cancelA()
	closed(t, a)
	h.Publish(ev(1)) // must not send on a's closed channel
	if got := recv(t, b); got != ev(1) {
		t.Fatalf("got %+v, want %+v", got, ev(1))
	}
	h.mu.Lock()
	n := len(h.subs)
	h.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d subscriptions left, want 1", n)
	}
}

// CloseAll ends every subscription and its goroutine; a context ending
// afterwards, or a second CloseAll, is harmless.
func TestHubCloseAll(t *testing.T) {
	defer goleak.VerifyNone(t)
	var h Hub
	ctx, cancel := context.WithCancel(context.Background())
	chs := []<-chan store.Event{h.Subscribe(ctx), h.Subscribe(context.Background())}
	h.Publish(ev(1))
	h.CloseAll()
	for _, ch := range chs {
		if got := recv(t, ch); got != ev(1) { // delivered before CloseAll
			t.Fatalf("got %+v, want %+v", got, ev(1))
		}
		closed(t, ch)
	}
	// The subscription goroutines are gone even though a context never ends.
	if err := goleak.Find(); err != nil {
		t.Fatal(err)
	}
	cancel()
	h.CloseAll()
	h.Publish(ev(2))
	h.MarkMissed()
	time.Sleep(10 * time.Millisecond) // let a (wrongly) live goroutine see cancel
}
