package openrath

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/openrath/rath/session"
)

// ImportOp is the lineage Op of a session made by Decode.
const ImportOp = "import:openrath"

// Decode reads a session file written by OpenRath-Python's SessionWriter
// (JSONL records "header", "chunk", "trailer", schema_version 1) and returns
// it as a session with lineage Op ImportOp, Kind session.LineageImport.
//
// The session's id is the header's UUID as a session id (IDOf), and its
// lineage Parents are the parent_session_ids that are UUIDs, likewise: a
// family of files imported in any order links up, each edge naming its
// parent's id before or after that parent arrives. A file whose parents
// name itself is refused (ErrCycle). The header is kept in lineage extras
// (see ExtraID and the others) so that Encode writes it again.
//
// The chunks are, in order: a placement chunk if the header names a
// sandbox backend, one chunk per chunk record (and, before the row each
// names, a system chunk per PromptKey extra), and, if the run closed, a
// trailer chunk carrying the cumulative usage at closed_at (see trailer).
// Every chunk made from the file has Node ImportNode and the header's
// created_at as its time, so importing the same bytes twice gives the same
// session. A tool row whose content is the original's failure body becomes
// a failed tool result. Sandbox env values are never imported: the original
// wrote them in plaintext and they may be secrets; only their names
// survive, as Spec.SecretEnv.
//
// Like the original loader, Decode ignores a torn final line (one cut off
// mid-write, without its newline) and accepts a file without trailer (a
// crashed run). Unlike it, it checks that chunk indexes run 0, 1, 2… and
// that the trailer's final_chunk_count matches. Every error is a
// *session.DecodeError naming the 1-based line at fault, whose Err wraps
// session.ErrCorrupt, or session.ErrVersion for a schema_version other
// than 1.
func Decode(r io.Reader) (*session.Session, error) {
	return decode(r, maxLine)
}

// DecodeFile decodes the OpenRath session file at path; decoding errors
// name the path in their *session.DecodeError.
func DecodeFile(path string) (*session.Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Decode(f)
	if de, ok := errors.AsType[*session.DecodeError](err); ok {
		de.Path = path
	}
	return s, err
}

// decode is Decode with the line limit as a parameter, so tests need not
// build 64 MiB lines.
func decode(r io.Reader, limit int) (*session.Session, error) {
	d := &decoder{args: map[string]json.RawMessage{}}
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for {
		line, terminated, err := readLine(br, buf[:0], limit)
		if err == nil && !terminated && len(line) == 0 {
			break // clean end of input
		}
		d.line++
		switch {
		case errors.Is(err, errLineTooLong):
			return nil, d.corrupt("longer than %d MiB", limit>>20)
		case err != nil:
			return nil, d.corrupt("read: %w", err)
		}
		buf = line // reuse the grown buffer; nothing keeps a reference to it
		if err := d.record(line, terminated); err != nil {
			return nil, err
		}
		if !terminated {
			break
		}
	}
	return d.finish()
}

// decoder holds the state of one Decode call.
type decoder struct {
	line int // 1-based number of the line being decoded

	hdr     *header
	hdrLine int
	s       *session.Session // the session so far, made when the header is read
	rows    int              // chunk records seen

	// args maps tool call ids to the arguments of the latest assistant call
	// with that id, so tool results can carry them as evidence.
	args map[string]json.RawMessage

	closed      bool // a trailer was seen
	trailerLine int

	prompts int // how many of hdr.prompts are appended
}

// fail returns a *session.DecodeError for the current line whose Err wraps
// sentinel (session.ErrCorrupt or session.ErrVersion) and whatever the
// format wraps with %w, such as an ErrInvalid from a rejected chunk.
func (d *decoder) fail(sentinel error, format string, args ...any) error {
	return &session.DecodeError{
		Line: d.line,
		Err:  fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...),
	}
}

// corrupt returns a session.ErrCorrupt error naming the current line.
func (d *decoder) corrupt(format string, args ...any) error {
	return d.fail(session.ErrCorrupt, format, args...)
}

// record decodes one line.
func (d *decoder) record(line []byte, terminated bool) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil // the original skips blank lines too
	}
	var rec jsonObject
	if err := json.Unmarshal(line, &rec); err != nil {
		if syn, ok := errors.AsType[*json.SyntaxError](err); ok {
			if !terminated {
				// A final line without its newline that does not parse
				// is a write cut short by a crash: drop it, as the
				// original loader does.
				return nil
			}
			return d.corrupt("invalid JSON at byte %d: %w", syn.Offset, syn)
		}
		return d.corrupt("record is a JSON %s, not an object", jsonType(line))
	}
	if rec == nil {
		return d.corrupt("record is JSON null, not an object")
	}
	rt, ok, err := rec.str("record_type")
	if err != nil {
		return d.corrupt("%w", err)
	}
	if !ok {
		return d.corrupt("record has no record_type")
	}
	if d.closed {
		return d.corrupt("%q record after the trailer on line %d", rt, d.trailerLine)
	}
	switch rt {
	case "header":
		return d.header(rec)
	case "chunk":
		return d.chunk(rec)
	case "trailer":
		return d.trailer(rec)
	}
	return d.corrupt("unknown record_type %q", rt)
}

// append seals a chunk made from the file: produced by ImportNode, at the
// header's time.
func (d *decoder) append(c session.Chunk) error {
	return d.seal(c.WithNode(ImportNode).WithTime(d.hdr.created))
}

// seal appends c as it is. TryAppend turns malformed data into an error
// instead of a panic.
func (d *decoder) seal(c session.Chunk) error {
	s, err := d.s.TryAppend(c)
	if err != nil {
		return d.corrupt("chunk rejected: %w", err)
	}
	d.s = s
	return nil
}

// promptsBefore appends the system prompts that stood before row (all
// those left, for math.MaxInt).
func (d *decoder) promptsBefore(row int) error {
	for ; d.prompts < len(d.hdr.prompts) && d.hdr.prompts[d.prompts].Row <= row; d.prompts++ {
		p := d.hdr.prompts[d.prompts]
		if err := d.seal(session.System(p.Content).WithNode(p.Node).WithTime(d.hdr.created)); err != nil {
			return err
		}
	}
	return nil
}

// finish appends the prompts that stood after the last row of a file
// without trailer, and returns the session.
func (d *decoder) finish() (*session.Session, error) {
	if d.hdr == nil {
		d.line = 1 // an empty file is wrong from its first line
		return nil, d.corrupt("no header record")
	}
	if err := d.promptsBefore(math.MaxInt); err != nil {
		return nil, err
	}
	return d.s, nil
}
