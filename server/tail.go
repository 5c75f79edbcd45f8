package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// tailPage bounds the chunks one store read fetches while catching up.
const tailPage = 1000

// tailStream is one client's event stream of a session's chunks
// (GET /v1/sessions/{id}/events); its writing half (event, write) serves
// the other streams too.
type tailStream struct {
	st store.Store
	// chunks reads and encodes the chunks to send (the server's
	// chunkCache, shared by every stream).
	chunks *chunkCache
	id     session.ID
	w      http.ResponseWriter
	rc     *http.ResponseController
	sent   int // chunks [0, sent) are known to the client
}

// v1Chunk is the payload of a /v1 chunk event (catchUp writes it around
// the chunk's JSON the cache holds, rather than encoding this).
type v1Chunk struct {
	Index int           `json:"index"`
	Kind  session.Kind  `json:"kind"`
	Chunk session.Chunk `json:"chunk"`
}

// follow sends each chunk of t's session committed from now on, and the
// comment every heartbeat, until the client goes, the store stops
// delivering commits or the server shuts down (an "end" event for the last
// two); a store failure is an "error" event whose data errBody makes.
func (t *tailStream) follow(ctx context.Context, events <-chan store.Event, heartbeat time.Duration, comment string, errBody func(error) any) {
	hb := time.NewTicker(heartbeat)
	defer hb.Stop()
	stop := stopping(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			_ = t.event("end", "", map[string]string{"reason": "the server is shutting down"})
			return
		case <-hb.C:
			if t.write(comment) != nil {
				return
			}
		case ev, ok := <-events:
			if !ok {
				_ = t.event("end", "", map[string]string{"reason": "the store stopped delivering commits"})
				return
			}
			ev = latest(events, ev, t.id)
			if err := t.handle(ctx, ev); err != nil {
				if ctx.Err() == nil {
					_ = t.event("error", "", errBody(err))
				}
				return
			}
		}
	}
}

// latest folds the events already waiting in events into ev: the longest
// of id's, or a Missed mark (which rereads the session). A stream that fell
// behind then sends what it missed at once.
func latest(events <-chan store.Event, ev store.Event, id session.ID) store.Event {
	for {
		select {
		case next, ok := <-events:
			if !ok {
				return ev
			}
			switch {
			case next.Missed || ev.Missed:
				ev.Missed = true
				if next.ID == id && next.Len > ev.Len {
					ev.ID, ev.Len = id, next.Len
				}
			case next.ID == id && (ev.ID != id || next.Len > ev.Len):
				ev = next
			}
		default:
			return ev
		}
	}
}

// handle reacts to one commit event (a label write adds no chunks).
func (t *tailStream) handle(ctx context.Context, ev store.Event) error {
	switch {
	case ev.Labels && !ev.Missed:
		return nil
	case ev.ID == t.id:
		// Our own event's length covers any of ours that were missed.
		return t.catchUp(ctx, ev.Len)
	case ev.Missed:
		info, err := t.st.Info(ctx, t.id)
		if err != nil {
			return fmt.Errorf("re-read %s after missed events: %w", t.id, err)
		}
		return t.catchUp(ctx, info.Len)
	}
	return nil
}

// catchUp sends chunks [sent, upto), page by page.
func (t *tailStream) catchUp(ctx context.Context, upto int) error {
	for t.sent < upto {
		to := min(t.sent+tailPage, upto)
		cs, err := t.chunks.Encoded(ctx, t.id, t.sent, to)
		if err != nil {
			return fmt.Errorf("read chunks [%d,%d) of %s: %w", t.sent, to, t.id, err)
		}
		for i, c := range cs {
			n := strconv.Itoa(t.sent + i)
			// {"index", "kind", "chunk"}: v1Chunk, written around the chunk's JSON.
			data := fmt.Appendf(nil, `{"index":%s,"kind":%q,"chunk":%s}`, n, c.kind.String(), c.json)
			if _, err := t.w.Write([]byte("event: chunk\nid: " + n + "\ndata: " + string(data) + "\n\n")); err != nil {
				return err
			}
		}
		t.sent = to
		// One flush for what was written: a stream that fell behind
		// catches up in one write to its connection, not one per chunk.
		if err := t.rc.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// event writes one event with a JSON payload and flushes it.
func (t *tailStream) event(name, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", name, err)
	}
	msg := "event: " + name + "\n"
	if id != "" {
		msg += "id: " + id + "\n"
	}
	return t.write(msg + "data: " + string(b) + "\n\n")
}

// write sends raw event-stream text and flushes it.
func (t *tailStream) write(s string) error {
	if _, err := t.w.Write([]byte(s)); err != nil {
		return err
	}
	return t.rc.Flush()
}

// startEvents answers with the headers of a Server-Sent Events stream,
// unbuffered by proxies.
func startEvents(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}
