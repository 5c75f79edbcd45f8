package opensandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxFrame bounds one line of execd's stream (an output event carries one
// line of the command's output).
const maxFrame = 16 << 20

// event is execd's ServerStreamEvent, with the fields rath reads.
type event struct {
	Type  string      `json:"type"`
	Text  string      `json:"text,omitempty"`
	Error *eventError `json:"error,omitempty"`
}

// eventError is the error of an "error" event: for a command that ran,
// evalue is its exit status in decimal.
type eventError struct {
	EName     string   `json:"ename"`
	EValue    string   `json:"evalue"`
	Traceback []string `json:"traceback,omitempty"`
}

// errFrameTooLong: a line of the stream is longer than maxFrame.
var errFrameTooLong = errors.New("execd: an event longer than 16 MiB")

// events reads execd's event stream: JSON objects, each on a line of its
// own followed by a blank line. It reads as the SDKs do: blank lines and
// SSE comment and field lines (":", "event:", "id:", "retry:") are
// skipped, a "data:" prefix is dropped, and a line that is not a JSON
// object is ignored.
type events struct {
	r   *bufio.Reader
	err error // sticky: the stream has ended
}

func newEvents(r io.Reader) *events { return &events{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next event; io.EOF at the stream's clean end, or the
// read error that broke it.
func (d *events) next() (event, error) {
	for d.err == nil {
		var line []byte
		line, d.err = d.line()
		if len(line) > 0 {
			if ev, ok := parseFrame(line); ok {
				return ev, nil
			}
		}
	}
	return event{}, d.err
}

// line reads one line without its ending; at the end of the stream it
// returns what was left and the error.
func (d *events) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := d.r.ReadSlice('\n')
		if len(buf)+len(chunk) > maxFrame {
			return nil, errFrameTooLong
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			buf = bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r"))
		}
		return buf, err
	}
}

// parseFrame reads one line of the stream as an event.
func parseFrame(line []byte) (event, bool) {
	switch {
	case line[0] == ':', bytes.HasPrefix(line, []byte("event:")), bytes.HasPrefix(line, []byte("id:")), bytes.HasPrefix(line, []byte("retry:")):
		return event{}, false
	case bytes.HasPrefix(line, []byte("data:")):
		line = bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return event{}, false
	}
	var ev event
	if err := json.Unmarshal(line, &ev); err != nil {
		return event{}, false
	}
	return ev, true
}

// writeLine writes one output line: execd removes each line's ending and
// sends an empty line as "\n".
func writeLine(w io.Writer, text string) {
	if w == nil {
		return
	}
	if text == "\n" {
		_, _ = io.WriteString(w, "\n")
		return
	}
	_, _ = io.WriteString(w, text+"\n")
}

// exitCode reads an error event: the command's exit status, or why it has
// none (it did not start).
func exitCode(e *eventError) (int, error) {
	if e == nil {
		return -1, fmt.Errorf("execd: an error event without its error")
	}
	n, err := strconv.Atoi(strings.TrimSpace(e.EValue))
	if err != nil {
		return -1, fmt.Errorf("execd: the command failed: %s: %s", e.EName, e.EValue)
	}
	return n, nil
}
