package openrath

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/openrath/rath/session"
)

// Encode writes s in OpenRath-Python's session JSONL format so that the
// original's load_session() reads it.
//
// The chunk records are s's transcript, the model's view: notes and memory
// recalls become system rows, evidence-only chunks (model calls, decisions,
// approvals, errors) are left out, and so are reasoning blocks, which the
// original has no place for. System prompts (system chunks not made by
// Decode) are written as PromptKey header extras, not rows, so that the
// original, continuing the file, does not send them twice. A failed tool
// result is written in the original's failure shape.
//
// An imported session (Decode's lineage, see ExtraID) gets its header back
// as the file had it: id, created_at, parents, operator, kind, extras and
// sandbox; and a trailer only if the file had one (a crashed run stays
// crashed). Another session's header id is UUIDOf its id, its parents
// likewise, its operator its lineage Op, and it always gets a trailer.
// Secret env names are not written: the original would need their values.
func Encode(w io.Writer, s *session.Session) error {
	if s == nil {
		return fmt.Errorf("%w: nil session", session.ErrInvalid)
	}
	rows, prompts, err := rowsOut(s)
	if err != nil {
		return err
	}
	imported := importExtras(s)
	bw := bufio.NewWriter(w)
	e := encoder{w: bw}
	e.write(headerOut(s, imported, prompts))
	for _, r := range rows {
		e.write(r)
	}
	if t := trailerOut(s, imported != nil, len(rows)); t != nil {
		e.write(t)
	}
	if e.err != nil {
		return e.err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode openrath: %w", err)
	}
	return nil
}

// encoder writes records and keeps the first error.
type encoder struct {
	w   io.Writer
	buf bytes.Buffer
	err error
}

// rawNEL is U+0085 (NEL). Python's str.splitlines, which the original
// loader uses, breaks lines at it; json.dumps and encoding/json both leave
// it raw. Escaped, the line stays one line for Python. (encoding/json
// already escapes U+2028 and U+2029, the other non-ASCII breaks.)
const rawNEL, escapedNEL = "\u0085", `\u0085`

func (e *encoder) write(rec any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false) // the original writes <, > and & as they are
	if err := enc.Encode(rec); err != nil {
		e.err = fmt.Errorf("%w: encode openrath record: %w", session.ErrInvalid, err)
		return
	}
	line := e.buf.Bytes()
	if bytes.Contains(line, []byte(rawNEL)) {
		line = bytes.ReplaceAll(line, []byte(rawNEL), []byte(escapedNEL))
	}
	if _, err := e.w.Write(line); err != nil {
		e.err = fmt.Errorf("encode openrath: %w", err)
	}
}

// trailerOut returns the trailer record, or nil for an imported session
// whose file had none. The trailer of an unchanged import has the file's
// closed_at and cumulative_usage; otherwise closed_at is the time of the
// last chunk and the usage is the session's.
func trailerOut(s *session.Session, imported bool, rows int) *trailerRecord {
	t := &trailerRecord{RecordType: "trailer", FinalChunkCount: rows}
	last, ok := s.Last()
	if !ok {
		last.Time = time.Now()
	}
	if imported {
		var closed bool
		for _, c := range s.All() {
			closed = closed || isTrailer(c)
		}
		if !closed {
			return nil
		}
		if isTrailer(last) {
			t.ClosedAt = isoTime(last.Time)
			t.CumulativeUsage = last.ModelCall.Raw
			return t
		}
	}
	t.ClosedAt = isoTime(last.Time)
	if u := s.Usage(); u.InputTokens != 0 || u.OutputTokens != 0 {
		t.CumulativeUsage = marshal(usage{u.InputTokens, u.OutputTokens, u.Total()})
	}
	return t
}
