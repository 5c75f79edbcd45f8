package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/openrath/rath/session"
)

// Event is one Server-Sent Event of a stream: its name, id (empty for
// events that do not move the stream's place) and JSON data.
type Event struct {
	Name string
	ID   string
	Data json.RawMessage
}

// ChunkEvent is the data of a "chunk" event.
type ChunkEvent struct {
	Index int           `json:"index"`
	Kind  session.Kind  `json:"kind"`
	Chunk session.Chunk `json:"chunk"`
}

// Chunk decodes a "chunk" event's data.
func (e Event) Chunk() (ChunkEvent, error) {
	var c ChunkEvent
	if e.Name != "chunk" {
		return c, fmt.Errorf("client: a %q event is not a chunk", e.Name)
	}
	if err := json.Unmarshal(e.Data, &c); err != nil {
		return c, fmt.Errorf("client: chunk event %s: %w", e.ID, err)
	}
	return c, nil
}

// Stream is an event stream that reconnects: when the connection drops it
// opens it again with Last-Event-ID set to the last event's id, so every
// event comes once. It ends at an "end" event, when its context ends, or
// on an error the server answers (a 4xx is not worth retrying).
type Stream struct {
	c     *Client
	ctx   context.Context
	path  string
	last  string // the id of the last event with one
	retry time.Duration
	// Reconnects counts the connections opened after the first.
	Reconnects int
}

// SessionEvents returns the event stream of session id: its chunks from
// the one after index after (-1: from the start), then each as it is
// committed. Read it with All.
func (c *Client) SessionEvents(ctx context.Context, id session.ID, after int) *Stream {
	s := &Stream{c: c, ctx: ctx, path: sessionPath(id, "/events"), retry: 200 * time.Millisecond}
	if after >= 0 {
		s.last = itoa(after)
	}
	return s
}

// maxRetry bounds the wait between two reconnections.
const maxRetry = 5 * time.Second

// All yields the stream's events; comments are left out. An error ends the
// sequence: the server's refusal, or the context's end.
func (s *Stream) All() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		first := true
		for {
			if !first {
				s.Reconnects++
			}
			first = false
			ended, err := s.once(yield)
			switch {
			case ended:
				return
			case s.ctx.Err() != nil:
				yield(Event{}, s.ctx.Err())
				return
			case refused(err):
				yield(Event{}, err)
				return
			}
			// The connection dropped: wait a little, then reconnect after
			// the last event.
			select {
			case <-s.ctx.Done():
				yield(Event{}, s.ctx.Err())
				return
			case <-time.After(s.retry):
			}
			s.retry = min(2*s.retry, maxRetry)
		}
	}
}

// once reads one connection. ended reports that the sequence is over: an
// "end" event, or the consumer stopped.
func (s *Stream) once(yield func(Event, error) bool) (ended bool, err error) {
	h := http.Header{"Accept": {"text/event-stream"}}
	if s.last != "" {
		h.Set("Last-Event-ID", s.last)
	}
	res, err := s.c.do(s.ctx, request{method: "GET", path: s.path, header: h})
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, &Error{Status: res.StatusCode, Code: "invalid_argument", Message: "the answer is not an event stream (" + ct + ")"}
	}
	for ev, err := range parseEvents(res.Body) {
		if err != nil {
			return false, err
		}
		s.retry = 200 * time.Millisecond // a live connection resets the backoff
		if ev.ID != "" {
			s.last = ev.ID
		}
		if !yield(ev, nil) {
			return true, nil
		}
		if ev.Name == "end" {
			return true, nil
		}
	}
	return false, io.ErrUnexpectedEOF
}

// maxEventLine bounds one line of an event stream.
const maxEventLine = 16 << 20

// parseEvents reads Server-Sent Events (the WHATWG format: "field: value"
// lines, a blank line ending an event, ":" comments) from r. Data lines of
// one event are joined by newlines. A line past maxEventLine is an error.
func parseEvents(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
		var ev Event
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if len(data) > 0 || ev.Name != "" {
					if ev.Name == "" {
						ev.Name = "message"
					}
					ev.Data = json.RawMessage(strings.Join(data, "\n"))
					if !yield(ev, nil) {
						return
					}
				}
				ev, data = Event{}, nil
				continue
			}
			if strings.HasPrefix(line, ":") {
				continue
			}
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.Name = value
			case "id":
				if !strings.ContainsRune(value, 0) {
					ev.ID = value
				}
			case "data":
				data = append(data, value)
			}
		}
		if err := sc.Err(); err != nil {
			yield(Event{}, fmt.Errorf("client: read the event stream: %w", err))
		}
	}
}

// refused reports whether err is the server's answer that retrying will
// not change: any *Error but unavailable (a restart, a store that is slow)
// and exhausted (the server holds as many streams as it takes, for now).
func refused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code != "unavailable" && e.Code != "exhausted"
}
