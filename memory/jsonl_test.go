package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// sampleEntries are entries with what a codec gets wrong: unicode, line
// breaks, quotes, HTML, empty content, evidence lists, zero and zoned times.
func sampleEntries(t testing.TB) []Entry {
	t.Helper()
	writer := session.FromUser("the build needs CGO_ENABLED=0").Append(session.Note("confirmed"))
	ev := []session.ChunkID{writer.Chunk(0).ID, writer.Chunk(1).ID}
	zone := time.FixedZone("", -7*3600)
	return []Entry{
		{URI: MustParseURI("memory://project/rath/build/cgo"), Content: "Build with CGO_ENABLED=0.",
			Provenance: Provenance{Session: writer.ID(), Evidence: ev, Agent: "coder", Kind: EvidenceHuman,
				Time: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)}},
		{URI: MustParseURI("memory://user/ann/notes/café ☕/日本"), Content: "line one\nline two\r\n\ttabbed \"quoted\" <b>&amp;</b> 😀 \u2028",
			Provenance: Provenance{Evidence: ev[:1], Kind: EvidenceToolResult, Time: time.Date(2025, 12, 31, 23, 59, 59, 0, zone)}},
		{URI: MustParseURI("memory://session/" + string(writer.ID()) + "/transcript"), Content: "",
			Provenance: Provenance{Session: writer.ID()}}, // zero time, no evidence
		{URI: MustParseURI("memory://agent/coder/x"), Content: strings.Repeat("long ", 20000)},
	}
}

// sameEntry compares entries as the codec promises to keep them: times by
// instant and offset, evidence nil or empty alike.
func sameEntry(a, b Entry) bool {
	pa, pb := a.Provenance, b.Provenance
	_, oa := pa.Time.Zone()
	_, ob := pb.Time.Zone()
	return a.URI == b.URI && a.Content == b.Content && pa.Session == pb.Session && pa.Agent == pb.Agent && pa.Kind == pb.Kind &&
		slices.Equal(pa.Evidence, pb.Evidence) && pa.Time.Equal(pb.Time) && oa == ob
}

func encodeAll(t testing.TB, h Header, es []Entry) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := NewEncoder(&b, h)
	for _, e := range es {
		if err := enc.Encode(e); err != nil {
			t.Fatalf("encode %s: %v", e.URI, err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	if enc.Count() != len(es) {
		t.Fatalf("Count %d, want %d", enc.Count(), len(es))
	}
	return b.Bytes()
}

// decodeAll returns the entries decoded before the first error (nil at a
// clean end).
func decodeAll(r io.Reader) ([]Entry, error) {
	d := NewDecoder(r)
	var out []Entry
	for {
		e, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	in := sampleEntries(t)
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	data := encodeAll(t, Header{ExportedAt: at, Source: "local /tmp/m.db"}, in)

	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 1+len(in) {
		t.Fatalf("%d lines, want a header and %d entries (a newline in content must be escaped):\n%s", len(lines), len(in), data)
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h["format"] != "rath-memory" || h["version"] != 1.0 ||
		h["exported_at"] != "2026-02-03T04:05:06Z" || h["source"] != "local /tmp/m.db" {
		t.Fatalf("header %s: %v", lines[0], err)
	}
	if !strings.Contains(lines[2], "<b>&amp;</b>") {
		t.Errorf("HTML was escaped: %s", lines[2])
	}

	d := NewDecoder(bytes.NewReader(data))
	got, err := d.Header()
	if err != nil || got.Format != JSONLFormat || got.Version != 1 || !got.ExportedAt.Equal(at) || got.Source != "local /tmp/m.db" {
		t.Fatalf("Header = %+v, %v", got, err)
	}
	out, err := decodeAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("decoded %d entries, want %d", len(out), len(in))
	}
	for i := range in {
		if !sameEntry(in[i], out[i]) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, out[i], in[i])
		}
	}
	if !out[2].Provenance.Time.IsZero() {
		t.Errorf("a zero time came back as %v", out[2].Provenance.Time)
	}
}

func TestJSONLEmptyExport(t *testing.T) {
	data := encodeAll(t, Header{}, nil)
	if n := strings.Count(string(data), "\n"); n != 1 {
		t.Fatalf("an empty export is %d lines, want the header alone: %q", n, data)
	}
	d := NewDecoder(bytes.NewReader(data))
	h, err := d.Header()
	if err != nil || h.ExportedAt.IsZero() {
		t.Fatalf("Header = %+v, %v (a zero ExportedAt is now)", h, err)
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
}

func TestJSONLDecodeRefuses(t *testing.T) {
	const (
		head  = `{"format":"rath-memory","version":1,"exported_at":"2026-01-01T00:00:00Z"}` + "\n"
		good  = `{"uri":"memory://project/rath/a","content":"x","provenance":{"time":"2026-01-01T00:00:00Z"}}` + "\n"
		chunk = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	)
	for _, c := range []struct {
		name, in, want string
		line           int
	}{
		{"empty input", "", "empty input", 1},
		{"no header", good, "no header", 1},
		{"wrong format", `{"format":"openrath","version":1}` + "\n", `format "openrath"`, 1},
		{"no version", `{"format":"rath-memory"}` + "\n", "version 0", 1},
		{"newer version", `{"format":"rath-memory","version":2}` + "\n" + good, "version 2 is newer than this build reads (1)", 1},
		{"header not JSON", "rath-memory v1\n", "not JSON", 1},
		{"not JSON", head + good + "{\"uri\":\n", "not JSON", 3},
		{"not an object", head + "[1,2]\n", "not a JSON object", 2},
		{"blank line", head + "\n" + good, "not JSON", 2},
		{"unknown field", head + `{"uri":"memory://project/rath/a","content":"x","provenance":{},"score":1}` + "\n", `unknown field "score"`, 2},
		{"case folded field", head + `{"URI":"memory://project/rath/a","content":"x","provenance":{}}` + "\n", `unknown field "URI"`, 2},
		{"unknown provenance field", head + good + `{"uri":"memory://project/rath/a","content":"x","provenance":{"writer":"me"}}` + "\n", `provenance: unknown field "writer"`, 3},
		{"repeated field", head + `{"uri":"memory://project/rath/a","uri":"memory://project/rath/b","content":"x","provenance":{}}` + "\n", `field "uri" repeated`, 2},
		{"no content", head + `{"uri":"memory://project/rath/a","provenance":{}}` + "\n", `no "content" field`, 2},
		{"null content", head + `{"uri":"memory://project/rath/a","content":null,"provenance":{}}` + "\n", "content: want a string", 2},
		{"no provenance", head + `{"uri":"memory://project/rath/a","content":"x"}` + "\n", `no "provenance" field`, 2},
		{"provenance not object", head + `{"uri":"memory://project/rath/a","content":"x","provenance":[]}` + "\n", "provenance: not a JSON object", 2},
		{"bad uri", head + `{"uri":"memory://nowhere/rath/a","content":"x","provenance":{}}` + "\n", `scope "nowhere"`, 2},
		{"uri not a string", head + `{"uri":7,"content":"x","provenance":{}}` + "\n", "uri: want a string", 2},
		{"bad time", head + `{"uri":"memory://project/rath/a","content":"x","provenance":{"time":"yesterday"}}` + "\n", "provenance:", 2},
		{"bad evidence", head + `{"uri":"memory://project/rath/a","content":"x","provenance":{"evidence":["sha1:ab"]}}` + "\n", "evidence", 2},
		{"bad session", head + `{"uri":"memory://project/rath/a","content":"x","provenance":{"session":"s1","evidence":["` + chunk + `"]}}` + "\n", `session id "s1"`, 2},
		{"two values", head + strings.TrimSuffix(good, "\n") + " {}\n", "more than one JSON value", 2},
		{"not UTF-8", head + good + good + "{\"uri\":\"memory://project/rath/\xff\"}\n", "not valid UTF-8", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(c.in))
			var err error
			for err == nil {
				_, err = d.Next()
			}
			if !errors.Is(err, ErrJSONL) {
				t.Fatalf("error %v, want ErrJSONL", err)
			}
			want := "line " + strconv.Itoa(c.line) + ": "
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want %q and %q", err, want, c.want)
			}
			if _, again := d.Next(); again != err {
				t.Errorf("the next Next says %v, want the same error again", again)
			}
		})
	}
}

func TestJSONLLineLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 64 MiB line")
	}
	head := `{"format":"rath-memory","version":1}` + "\n"
	long := `{"uri":"memory://project/rath/a","content":"` + strings.Repeat("x", MaxJSONLLine) + `","provenance":{}}` + "\n"
	_, err := decodeAll(strings.NewReader(head + long))
	if !errors.Is(err, ErrJSONL) || !strings.Contains(err.Error(), "line 2: longer than") {
		t.Fatalf("decode: %v", err)
	}
	enc := NewEncoder(io.Discard, Header{})
	err = enc.Encode(Entry{URI: MustParseURI("memory://project/rath/a"), Content: strings.Repeat("x", MaxJSONLLine)})
	if !errors.Is(err, ErrJSONL) || !strings.Contains(err.Error(), "line limit") {
		t.Fatalf("encode: %v", err)
	}
}

func TestJSONLEncodeRefuses(t *testing.T) {
	good := sampleEntries(t)[0]
	for _, c := range []struct {
		name string
		edit func(e *Entry)
		want string
	}{
		{"bad URI", func(e *Entry) { e.URI.Scope = "nowhere" }, `scope "nowhere"`},
		{"content not UTF-8", func(e *Entry) { e.Content = "caf\xe9" }, "not valid UTF-8"},
		{"bad evidence", func(e *Entry) { e.Provenance.Evidence = []session.ChunkID{"c1"} }, `chunk id "c1"`},
		{"bad session", func(e *Entry) { e.Provenance.Session = "s1" }, `session id "s1"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := good
			c.edit(&e)
			var b bytes.Buffer
			enc := NewEncoder(&b, Header{})
			err := enc.Encode(e)
			if !errors.Is(err, ErrJSONL) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Encode = %v, want ErrJSONL with %q", err, c.want)
			}
			if err := enc.Flush(); err != nil {
				t.Fatal(err)
			}
			if out, err := decodeAll(&b); err != nil || len(out) != 0 {
				t.Fatalf("after a refused entry the export holds %d entries, %v; want none", len(out), err)
			}
		})
	}
}

// TestJSONLProvenanceKeys: every key Provenance marshals is one the decoder
// accepts, so an export of a fully populated provenance always imports.
func TestJSONLProvenanceKeys(t *testing.T) {
	p := Provenance{Session: session.NewID(), Evidence: []session.ChunkID{session.FromUser("x").Head()}, Agent: "a", Kind: "k", Time: time.Now()}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Sorted(maps.Keys(provenanceKeys)), slices.Sorted(maps.Keys(m)); !slices.Equal(got, want) {
		t.Fatalf("decoder accepts %v, Provenance marshals %v", got, want)
	}
}

func FuzzDecodeJSONL(f *testing.F) {
	f.Add(encodeAll(f, Header{Source: "seed"}, sampleEntries(f)[:3]))
	f.Add(encodeAll(f, Header{}, nil))
	f.Add([]byte(`{"format":"rath-memory","version":1}` + "\n" + `{"uri":"memory://project/p/a","content":"\ud800 \u00e9","provenance":{"time":"2026-01-01T00:00:00+05:30"}}`))
	f.Add([]byte(`{"format":"rath-memory","version":2}` + "\n"))
	f.Add([]byte(`{"uri":"memory://project/p/a","content":"","provenance":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		first, err := decodeAll(bytes.NewReader(data))
		if err != nil && !errors.Is(err, ErrJSONL) {
			t.Fatalf("error %v does not wrap ErrJSONL", err)
		}
		// Whatever decoded, even before a bad line, re-encodes and decodes
		// to the same entries.
		var b bytes.Buffer
		enc := NewEncoder(&b, Header{})
		for _, e := range first {
			if err := enc.Encode(e); err != nil {
				t.Fatalf("decoded %+v does not encode: %v", e, err)
			}
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		second, err := decodeAll(&b)
		if err != nil {
			t.Fatalf("re-encoded export does not decode: %v\n%s", err, b.Bytes())
		}
		if len(second) != len(first) {
			t.Fatalf("%d entries, then %d", len(first), len(second))
		}
		for i := range first {
			if !sameEntry(first[i], second[i]) {
				t.Fatalf("entry %d: %+v, then %+v", i, first[i], second[i])
			}
		}
	})
}
