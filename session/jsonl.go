package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// SchemaVersion is the version of the JSONL session format this build writes
// and reads. See docs/session-jsonl.md.
const SchemaVersion = 1

// jsonlFormat tells our files apart from other JSONL.
const jsonlFormat = "rath.session"

// maxLine bounds one JSONL line, so hostile input cannot exhaust memory.
const maxLine = 64 << 20

// record is one line of the JSONL format; Type says which fields are set.
type record struct {
	Type string `json:"type"`
	// header
	Format        string   `json:"format,omitempty"`
	SchemaVersion int      `json:"schema_version,omitempty"`
	ID            ID       `json:"id,omitempty"`
	Lineage       *Lineage `json:"lineage,omitempty"`
	// chunk
	Index *int   `json:"index,omitempty"`
	Chunk *Chunk `json:"chunk,omitempty"`
	// trailer
	Count *int    `json:"count,omitempty"`
	Head  ChunkID `json:"head,omitempty"`
}

// Encode writes s as JSONL: a header line (format, schema version, id,
// lineage), one line per chunk, and a trailer with the chunk count and head
// id, so a reader can tell a complete file from a truncated one.
func Encode(w io.Writer, s *Session) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	lin := s.Lineage()
	if err := enc.Encode(record{Type: "header", Format: jsonlFormat, SchemaVersion: SchemaVersion, ID: s.id, Lineage: &lin}); err != nil {
		return fmt.Errorf("encode %s header: %w", s.id, err)
	}
	var err error
	s.t.each(0, func(i int, e *entry) bool {
		idx := i
		if err = enc.Encode(record{Type: "chunk", Index: &idx, Chunk: &e.Chunk}); err != nil {
			err = fmt.Errorf("encode %s chunk %d: %w", s.id, i, err)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	n := s.t.n
	if err := enc.Encode(record{Type: "trailer", Count: &n, Head: s.Head()}); err != nil {
		return fmt.Errorf("encode %s trailer: %w", s.id, err)
	}
	return bw.Flush()
}

// DecodeError locates a decoding failure: the file (when known) and the
// 1-based line. It wraps ErrCorrupt or ErrVersion.
type DecodeError struct {
	Path string
	Line int
	Err  error
}

func (e *DecodeError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode reads a session written by Encode and checks everything it can:
// the header's format and version, each chunk's index, parent and
// recomputed id, and the trailer's count and head. Any failure is one
// *DecodeError naming the line.
func Decode(r io.Reader) (*Session, error) {
	d := decoder{lines: newLineReader(r)}
	return d.decode()
}

// DecodeFile decodes the session file at path; errors name the path.
func DecodeFile(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Decode(f)
	if de, ok := errors.AsType[*DecodeError](err); ok {
		de.Path = path
	}
	return s, err
}

type decoder struct {
	lines   *lineReader
	s       *Session
	trailer bool
}

func (d *decoder) fail(format string, args ...any) error {
	return &DecodeError{Line: d.lines.n, Err: fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)}
}

func (d *decoder) decode() (*Session, error) {
	for {
		line, err := d.lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, d.fail("%w", err) // a read error keeps its kind (a body past its limit: 413)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, d.fail("blank line")
		}
		if d.trailer {
			return nil, d.fail("data after the trailer")
		}
		var rec record
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, d.fail("%v", err)
		}
		if dec.More() {
			return nil, d.fail("more than one JSON value on the line")
		}
		if err := d.record(&rec); err != nil {
			return nil, err
		}
	}
	switch {
	case d.s == nil:
		return nil, &DecodeError{Line: d.lines.n, Err: fmt.Errorf("%w: no header (empty input?)", ErrCorrupt)}
	case !d.trailer:
		return nil, &DecodeError{Line: d.lines.n, Err: fmt.Errorf("%w: truncated: no trailer after %d chunks", ErrCorrupt, d.s.Len())}
	}
	return d.s, nil
}

func (d *decoder) record(rec *record) error {
	if rec.Type != "header" && d.s == nil {
		return d.fail("%q record before the header", rec.Type)
	}
	switch rec.Type {
	case "header":
		return d.header(rec)
	case "chunk":
		return d.chunk(rec)
	case "trailer":
		if rec.Count == nil {
			return d.fail("trailer has no count")
		}
		if *rec.Count != d.s.Len() {
			return d.fail("trailer count %d, but the file has %d chunks", *rec.Count, d.s.Len())
		}
		if rec.Head != d.s.Head() {
			return d.fail("trailer head %s, but the last chunk is %s", rec.Head.Short(), d.s.Head().Short())
		}
		d.trailer = true
		return nil
	}
	return d.fail("unknown record type %q", rec.Type)
}

func (d *decoder) header(rec *record) error {
	if d.s != nil {
		return d.fail("second header")
	}
	if rec.Format != jsonlFormat {
		return d.fail("format %q, want %q", rec.Format, jsonlFormat)
	}
	if rec.SchemaVersion != SchemaVersion {
		return &DecodeError{Line: d.lines.n, Err: fmt.Errorf("%w: schema version %d (this build reads %d)", ErrVersion, rec.SchemaVersion, SchemaVersion)}
	}
	if err := rec.ID.Validate(); err != nil {
		return d.fail("%v", err)
	}
	if rec.Lineage == nil {
		return d.fail("header has no lineage")
	}
	d.s = &Session{id: rec.ID, lin: ptr(rec.Lineage.clone())}
	return nil
}

func (d *decoder) chunk(rec *record) error {
	if rec.Index == nil || rec.Chunk == nil {
		return d.fail("chunk record without index or chunk")
	}
	if *rec.Index != d.s.Len() {
		return d.fail("chunk index %d, want %d", *rec.Index, d.s.Len())
	}
	c := *rec.Chunk
	if err := c.Validate(); err != nil {
		return d.fail("chunk %d: %v", *rec.Index, err)
	}
	id, err := c.computeID()
	if err != nil {
		return d.fail("chunk %d: %v", *rec.Index, err)
	}
	if id != c.ID {
		return d.fail("chunk %d: recorded id %s, content hashes to %s (altered or not canonical)", *rec.Index, c.ID.Short(), id.Short())
	}
	if err := d.s.appendSealed(c); err != nil {
		return d.fail("chunk %d: %v", *rec.Index, err)
	}
	return nil
}

// lineReader yields "\n"-terminated lines of any length up to maxLine.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
	n   int // lines read so far
	// torn reports whether the last line returned had no newline.
	torn bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 256<<10)}
}

// next returns the next line without its newline. The slice is valid until
// the following call.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		frag, err := l.r.ReadSlice('\n')
		if len(l.buf)+len(frag) > maxLine {
			l.n++
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			l.buf = append(l.buf, frag...)
			continue
		}
		if err == io.EOF && len(l.buf)+len(frag) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			l.n++
			return nil, err
		}
		l.n++
		l.torn = err == io.EOF
		if len(l.buf) == 0 {
			return bytes.TrimSuffix(frag, []byte("\n")), nil
		}
		l.buf = append(l.buf, frag...)
		return bytes.TrimSuffix(l.buf, []byte("\n")), nil
	}
}
