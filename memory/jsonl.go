package memory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// The JSONL export moves memory between backends (a local SQLite memory and
// a shared PostgreSQL one) with provenance intact. Its first line is a
// Header; each further line is one entry:
//
//	{"format":"rath-memory","version":1,"exported_at":"2026-01-02T03:04:05Z","source":"local /home/me/.rath/memory.db: full-text (bm25)"}
//	{"uri":"memory://project/rath/build/cgo","content":"Build with CGO_ENABLED=0.","provenance":{"session":"ses_…","evidence":["sha256:…"],"kind":"human_correction","time":"2026-01-02T03:04:05Z"}}
//
// An entry line has exactly the keys uri, content and provenance, and its
// provenance only the keys of Provenance; unknown or repeated keys are
// refused, so that nothing is silently dropped on the way. The header needs
// format and version; other keys in it are for people and are ignored.
const (
	// JSONLFormat names the format in the header.
	JSONLFormat = "rath-memory"
	// JSONLVersion is the version this build writes and the newest it reads.
	JSONLVersion = 1
	// MaxJSONLLine bounds one line (an entry's content, escaped, and its
	// provenance): longer lines are refused by the encoder and the decoder.
	MaxJSONLLine = 64 << 20
)

// ErrJSONL: a memory export is malformed. Decoder errors wrap it and name
// the line; Encoder errors wrap it and name the entry.
var ErrJSONL = errors.New("memory: bad JSONL")

// Header is the first line of a memory export.
type Header struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	// Source describes the memory exported (Describe), for people.
	Source string `json:"source,omitempty"`
}

// jsonlEntry is an entry line as written.
type jsonlEntry struct {
	URI        string     `json:"uri"`
	Content    string     `json:"content"`
	Provenance Provenance `json:"provenance"`
}

// Encoder writes a memory export: the header, then one line per entry.
type Encoder struct {
	w      *bufio.Writer
	h      Header
	headed bool
	n      int
	err    error
}

// NewEncoder returns an encoder writing to w. h's Format and Version are
// set to this build's; a zero ExportedAt is now.
func NewEncoder(w io.Writer, h Header) *Encoder {
	h.Format, h.Version = JSONLFormat, JSONLVersion
	if h.ExportedAt.IsZero() {
		h.ExportedAt = time.Now().UTC()
	}
	return &Encoder{w: bufio.NewWriter(w), h: h}
}

// Encode writes e, after the header if it is the first. It refuses an entry
// the decoder would refuse (a bad URI, session or evidence id, content that
// is not UTF-8, a line over MaxJSONLLine), so that an export always imports.
func (enc *Encoder) Encode(e Entry) error {
	if err := enc.header(); err != nil {
		return err
	}
	if err := e.Check(); err != nil {
		return fmt.Errorf("%w: entry %s: %v", ErrJSONL, e.URI, err)
	}
	if !utf8.ValidString(e.Content) {
		return fmt.Errorf("%w: entry %s: content is not valid UTF-8", ErrJSONL, e.URI)
	}
	line, err := marshalLine(jsonlEntry{URI: e.URI.String(), Content: e.Content, Provenance: e.Provenance})
	if err != nil {
		return fmt.Errorf("%w: entry %s: %v", ErrJSONL, e.URI, err)
	}
	if len(line) > MaxJSONLLine {
		return fmt.Errorf("%w: entry %s: %d bytes encoded, over the %d-byte line limit", ErrJSONL, e.URI, len(line), MaxJSONLLine)
	}
	if _, err := enc.w.Write(line); err != nil {
		enc.err = err
		return err
	}
	enc.n++
	return nil
}

// Count is how many entries were encoded.
func (enc *Encoder) Count() int { return enc.n }

// Flush writes the header if no entry did (an empty export is a header
// alone) and flushes what is buffered. Call it once the entries are written.
func (enc *Encoder) Flush() error {
	if err := enc.header(); err != nil {
		return err
	}
	if err := enc.w.Flush(); err != nil {
		enc.err = err
		return err
	}
	return nil
}

func (enc *Encoder) header() error {
	if enc.err != nil || enc.headed {
		return enc.err
	}
	line, err := marshalLine(enc.h)
	if err == nil {
		_, err = enc.w.Write(line)
	}
	enc.headed, enc.err = true, err
	return err
}

// marshalLine is v as one line of JSON, HTML left unescaped.
func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Decoder reads a memory export, checking it line by line.
type Decoder struct {
	r    *bufio.Reader
	line int
	h    *Header
	err  error
	buf  []byte
}

// NewDecoder returns a decoder reading from r.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: bufio.NewReaderSize(r, 64<<10)} }

// Line is the number of the last line read (1 is the header).
func (d *Decoder) Line() int { return d.line }

// Header reads and checks the header, if not done yet, and returns it. A
// header of a newer version than JSONLVersion is refused.
func (d *Decoder) Header() (Header, error) {
	if d.h != nil {
		return *d.h, nil
	}
	if d.err != nil {
		return Header{}, d.err
	}
	line, err := d.next()
	if err == io.EOF {
		return Header{}, d.fail("empty input: a memory export starts with a %q header", JSONLFormat)
	}
	if err != nil {
		return Header{}, err
	}
	fields, err := object(line)
	if err != nil {
		return Header{}, d.fail("header: %v", err)
	}
	var h Header
	for _, f := range []struct {
		key string
		dst any
	}{{"format", &h.Format}, {"version", &h.Version}, {"exported_at", &h.ExportedAt}, {"source", &h.Source}} {
		raw, ok := fields[f.key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return Header{}, d.fail("header: %s: %v", f.key, err)
		}
	}
	if h.Format != JSONLFormat {
		if _, entry := fields["uri"]; entry {
			return Header{}, d.fail("no header: a memory export starts with {\"format\":%q,\"version\":%d,...}", JSONLFormat, JSONLVersion)
		}
		return Header{}, d.fail("header: format %q, want %q", h.Format, JSONLFormat)
	}
	switch {
	case h.Version > JSONLVersion:
		return Header{}, d.fail("version %d is newer than this build reads (%d): upgrade rath to import it", h.Version, JSONLVersion)
	case h.Version < 1:
		return Header{}, d.fail("header: version %d, want 1 to %d", h.Version, JSONLVersion)
	}
	d.h = &h
	return h, nil
}

// Next returns the next entry, io.EOF after the last one. Any other error
// wraps ErrJSONL and names the line; it is returned again by later calls.
func (d *Decoder) Next() (Entry, error) {
	if _, err := d.Header(); err != nil {
		return Entry{}, err
	}
	line, err := d.next()
	if err != nil {
		return Entry{}, err
	}
	if !utf8.Valid(line) {
		return Entry{}, d.fail("not valid UTF-8")
	}
	e, err := decodeEntry(line)
	if err != nil {
		return Entry{}, d.fail("%v", err)
	}
	return e, nil
}

// next reads one line without its newline; io.EOF at the end of input.
func (d *Decoder) next() ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	d.buf = d.buf[:0]
	for {
		chunk, err := d.r.ReadSlice('\n')
		d.buf = append(d.buf, chunk...)
		if len(d.buf) > MaxJSONLLine+1 {
			d.line++
			return nil, d.fail("longer than %d bytes", MaxJSONLLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(d.buf) == 0 {
			d.err = io.EOF
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			d.err = fmt.Errorf("%w: line %d: read: %w", ErrJSONL, d.line+1, err)
			return nil, d.err
		}
		d.line++
		return bytes.TrimSuffix(bytes.TrimSuffix(d.buf, []byte("\n")), []byte("\r")), nil
	}
}

// fail records and returns an error about the current line.
func (d *Decoder) fail(format string, a ...any) error {
	line := max(d.line, 1)
	d.err = fmt.Errorf("%w: line %d: %s", ErrJSONL, line, fmt.Sprintf(format, a...))
	return d.err
}

// provenanceKeys are the JSON keys of Provenance.
var provenanceKeys = func() map[string]bool {
	keys := map[string]bool{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Provenance]()) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// decodeEntry decodes and checks one entry line.
func decodeEntry(line []byte) (Entry, error) {
	fields, err := object(line)
	if err != nil {
		return Entry{}, err
	}
	for k := range fields {
		if k != "uri" && k != "content" && k != "provenance" {
			return Entry{}, fmt.Errorf("unknown field %q (an entry has uri, content and provenance)", k)
		}
	}
	var w jsonlEntry
	for _, f := range []struct {
		key string
		dst any
	}{{"uri", &w.URI}, {"content", &w.Content}} {
		raw, ok := fields[f.key]
		if !ok {
			return Entry{}, fmt.Errorf("no %q field", f.key)
		}
		if raw[0] != '"' {
			return Entry{}, fmt.Errorf("%s: want a string", f.key)
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return Entry{}, fmt.Errorf("%s: %v", f.key, err)
		}
	}
	raw, ok := fields["provenance"]
	if !ok {
		return Entry{}, fmt.Errorf("no \"provenance\" field")
	}
	prov, err := object(raw)
	if err != nil {
		return Entry{}, fmt.Errorf("provenance: %v", err)
	}
	for k := range prov {
		if !provenanceKeys[k] {
			return Entry{}, fmt.Errorf("provenance: unknown field %q", k)
		}
	}
	if err := json.Unmarshal(raw, &w.Provenance); err != nil {
		return Entry{}, fmt.Errorf("provenance: %v", err)
	}
	u, err := ParseURI(w.URI)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{URI: u, Content: w.Content, Provenance: w.Provenance}
	if err := e.Check(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// object splits one JSON object into its members' raw values, refusing
// anything else, a repeated key, and trailing data.
func object(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", jsonErr(err))
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", jsonErr(err))
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("not JSON: a key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("not JSON: %v", jsonErr(err))
		}
		raw = bytes.TrimSpace(raw)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("field %q repeated", key)
		}
		out[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %v", jsonErr(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	return out, nil
}

// jsonErr names an unexpected end of input plainly.
func jsonErr(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of line")
	}
	return err
}
