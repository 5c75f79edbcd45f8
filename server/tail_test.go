package server

import (
	"context"
	"encoding/json"
	"fmt"
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
	var c v1Chunk
	if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
		t.Fatalf("chunk event data %q: %v", ev.data, err)
	}
	if ev.id != strconv.Itoa(index) || c.Index != index || c.Chunk.ID != id || c.Kind != c.Chunk.Kind {
		t.Fatalf("chunk event %s (%d, %s), want %d (%s)", ev.id, c.Index, c.Chunk.ID.Short(), index, id.Short())
	}
	return c.Chunk
}

// openLive opens the event stream of session id and reads it up to its
// "live" event, checking the length it reports.
func openLive(t *testing.T, base string, id session.ID, n int) <-chan sseEvent {
	t.Helper()
	events, res := openTail(t, base+"/v1/sessions/"+string(id)+"/events")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	live, ok := nextEvent(t, events, "live", within)
	if !ok {
		t.Fatal("stream ended before live")
	}
	if live.data != fmt.Sprintf(`{"len":%d}`, n) {
		t.Fatalf("live %q, want len %d", live.data, n)
	}
	return events
}

// A stream follows its own session's commits, not another's.
func TestV1EventsFollowCommits(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	_, ts := newTestServer(t, st, Options{})
	events := openLive(t, ts.URL, fx.root.ID(), fx.root.Len())

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

func TestV1EventsMissedEvents(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	ws := &watchStore{Store: st, ch: make(chan store.Event, 4)}
	_, ts := newTestServer(t, ws, Options{})
	events := openLive(t, ts.URL, fx.root.ID(), fx.root.Len())

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

func TestV1EventsKeepAlive(t *testing.T) {
	st := openStore(t)
	fx := seed(t, st)
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.heartbeat = 10 * time.Millisecond // before any request reads it
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close) // after openTail's cleanup has ended the stream
	events := openLive(t, ts.URL, fx.root.ID(), fx.root.Len())
	if ev, ok := nextEvent(t, events, "comment", within); !ok || ev.data != "keep-alive" {
		t.Fatalf("heartbeat %+v", ev)
	}
}
