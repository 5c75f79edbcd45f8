package osfake

import (
	"encoding/json"
	"net/http"
	"time"
)

// Stream event types (ServerStreamEvent.type).
const (
	eventInit     = "init"
	eventStdout   = "stdout"
	eventStderr   = "stderr"
	eventError    = "error"
	eventComplete = "execution_complete"
	eventPing     = "ping"
)

// pingEvery is how often execd sends a ping event on an open stream
// (controller/sse.go).
const pingEvery = 3 * time.Second

// streamEvent is the spec's ServerStreamEvent, with execd's omitempty on
// every field (an execution_time of 0 is left out).
type streamEvent struct {
	Type           string         `json:"type,omitempty"`
	Text           string         `json:"text,omitempty"`
	ExecutionCount int            `json:"execution_count,omitempty"`
	ExecutionTime  int64          `json:"execution_time,omitempty"`
	Timestamp      int64          `json:"timestamp,omitempty"`
	Results        map[string]any `json:"results,omitempty"`
	Error          *errorOutput   `json:"error,omitempty"`
}

type errorOutput struct {
	EName     string   `json:"ename"`
	EValue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

func event(typ, text string) streamEvent {
	return streamEvent{Type: typ, Text: text, Timestamp: time.Now().UnixMilli()}
}

// eventStream writes events as the real execd frames them
// (controller/sse.go): each event's JSON followed by a blank line, no
// "data:" prefix, under a text/event-stream content type committed with
// the first event, flushed after each. It is used by one goroutine.
type eventStream struct {
	w       http.ResponseWriter
	cut     int // break after this many bytes (0: never)
	sent    int
	started bool
	broken  bool // the cut was reached
	gone    bool // a write failed: the client left
}

func (st *eventStream) send(ev streamEvent) {
	if st.broken || st.gone {
		return
	}
	if !st.started {
		h := st.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		h.Set("X-Accel-Buffering", "no")
		st.w.WriteHeader(http.StatusOK)
		st.started = true
	}
	frame, _ := json.Marshal(ev)
	frame = append(frame, '\n', '\n')
	if st.cut > 0 && st.sent+len(frame) >= st.cut {
		frame = frame[:st.cut-st.sent]
		st.broken = true
	}
	n, err := st.w.Write(frame)
	st.sent += n
	if err != nil {
		st.gone = true
	}
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// lineSplitter cuts output into lines as execd does
// (runtime/command_common.go readFromPos): "\n" and "\r" end a line, a
// "\r\n" pair counts once, a line is sent without its ending, an empty
// line is sent as "\n", and a last line without an ending is sent when
// the output ends.
type lineSplitter struct {
	buf  []byte
	cr   bool
	emit func(string)
}

func (l *lineSplitter) feed(p []byte) {
	for _, c := range p {
		if c != '\n' && c != '\r' {
			l.cr = false
			l.buf = append(l.buf, c)
			continue
		}
		switch {
		case len(l.buf) > 0:
			l.emit(string(l.buf))
			l.buf = l.buf[:0]
		case c == '\n' && l.cr:
			// the second half of "\r\n"
		default:
			l.emit("\n")
		}
		l.cr = c == '\r'
	}
}

func (l *lineSplitter) flush() {
	if len(l.buf) > 0 {
		l.emit(string(l.buf))
		l.buf = l.buf[:0]
	}
}
