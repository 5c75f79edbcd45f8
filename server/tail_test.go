package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

const within = 20 * time.Second

// wantChunk reads the next chunk event and checks its index and id.
func wantChunk(t *testing.T, events <-chan sseEvent, index int, id session.ChunkID) session.Chunk {
	t.Helper()
	ev, ok := nextEvent(t, events, "chunk", within)
	if !ok {
		t.Fatalf("stream ended before chunk %d", index)
	}
	var c session.Chunk
	if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
		t.Fatalf("chunk event data %q: %v", ev.data, err)
	}
	if ev.id != strconv.Itoa(index) || c.ID != id {
		t.Fatalf("chunk event %s (%s), want %d (%s)", ev.id, c.ID.Short(), index, id.Short())
	}
	return c
}

func TestTail(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	events, res := openTail(t, ts.URL+"/api/sessions/"+string(fx.root.ID())+"/tail")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tail: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	ready, ok := nextEvent(t, events, "ready", within)
	if !ok {
		t.Fatal("stream ended before ready")
	}
	var r struct {
		ID  session.ID `json:"id"`
		Len int        `json:"len"`
	}
	if err := json.Unmarshal([]byte(ready.data), &r); err != nil || r.ID != fx.root.ID() || r.Len != fx.root.Len() {
		t.Fatalf("ready %q: %v", ready.data, err)
	}

	// A commit to another session is not ours; the next commit to ours is.
	commit(t, st, fx.fork.Append(session.Note("elsewhere")), fx.fork.Head())
	next := fx.root.Append(session.Note("committed while tailing"), session.User("and one more"))
	commit(t, st, next, fx.root.Head())
	c := wantChunk(t, events, fx.root.Len(), next.Chunk(fx.root.Len()).ID)
	if c.Text() != "committed while tailing" {
		t.Errorf("chunk text %q", c.Text())
	}
	wantChunk(t, events, fx.root.Len()+1, next.Head())
}

// watchStore replaces a store's Watch with a channel the test feeds.
type watchStore struct {
	store.Store
	ch chan store.Event
}

func (w *watchStore) Watch(context.Context) (<-chan store.Event, error) { return w.ch, nil }

func TestTailMissedEvents(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	ws := &watchStore{Store: st, ch: make(chan store.Event, 4)}
	_, ts := newTestServer(t, ws, Options{})
	events, _ := openTail(t, ts.URL+"/api/sessions/"+string(fx.root.ID())+"/tail")
	nextEvent(t, events, "ready", within)

	// Two commits whose events this watcher never sees...
	a := fx.root.Append(session.Note("missed one"))
	commit(t, st, a, fx.root.Head())
	b := a.Append(session.Note("missed two"))
	commit(t, st, b, a.Head())
	// ...then an event for another session that says events were missed.
	ws.ch <- store.Event{ID: fx.fork.ID(), Len: fx.fork.Len(), Missed: true}
	wantChunk(t, events, fx.root.Len(), a.Head())
	wantChunk(t, events, fx.root.Len()+1, b.Head())

	// Closing the watch ends the stream with an end event.
	close(ws.ch)
	if _, ok := nextEvent(t, events, "end", within); !ok {
		t.Fatal("no end event when the watch closed")
	}
}

func TestTailResumesAfterLastEventID(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	// A client that saw chunks up to index 2 reconnects: it gets 3 and 4.
	events, _ := openTail(t, ts.URL+"/api/sessions/"+string(fx.root.ID())+"/tail", "Last-Event-ID", "2")
	nextEvent(t, events, "ready", within)
	wantChunk(t, events, 3, fx.root.Chunk(3).ID)
	wantChunk(t, events, 4, fx.root.Chunk(4).ID)
}

func TestTailHeartbeat(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.heartbeat = 10 * time.Millisecond // before any request reads it
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close) // after openTail's cleanup has ended the stream
	events, _ := openTail(t, ts.URL+"/api/sessions/"+string(fx.root.ID())+"/tail")
	nextEvent(t, events, "ready", within)
	if ev, ok := nextEvent(t, events, "comment", within); !ok || ev.data != "heartbeat" {
		t.Fatalf("heartbeat %+v", ev)
	}
}

func TestTailErrors(t *testing.T) {
	st := openStore(t)
	seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	call(t, "GET", ts.URL+"/api/sessions/"+missingID+"/tail", "").wantError(t, http.StatusNotFound)
	call(t, "GET", ts.URL+"/api/sessions/bad/tail", "").wantError(t, http.StatusBadRequest)
}
