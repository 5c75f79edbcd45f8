package openrath

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openrath/rath/session"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeBytes(t testing.TB, b []byte) *session.Session {
	t.Helper()
	s, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return s
}

func encodeBytes(t testing.TB, s *session.Session) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, s); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return buf.Bytes()
}

// decodeErrorLine returns the line a decoding error names, failing the test
// if err is not a *session.DecodeError.
func decodeErrorLine(t testing.TB, err error) int {
	t.Helper()
	de, ok := errors.AsType[*session.DecodeError](err)
	if !ok {
		t.Fatalf("error %q (%T) is not a *session.DecodeError", err, err)
	}
	return de.Line
}

// noIDs returns the transcript without the chunk ids, which differ between a
// session and its re-import (the placement and usage chunks move), and
// without the source kinds, which the format does not keep (a note comes
// back as a system chunk, as trusted as it was).
func noIDs(ms []session.Message) []session.Message {
	out := slices.Clone(ms)
	for i := range out {
		out[i].Chunk, out[i].Source = "", 0
	}
	return out
}

// chunkKinds lists the kinds of s's chunks in order.
func chunkKinds(s *session.Session) []session.Kind {
	var out []session.Kind
	for _, c := range s.All() {
		out = append(out, c.Kind)
	}
	return out
}

// records parses output line by line, failing on anything that is not one
// "\n"-terminated JSON object per line.
func records(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	if !bytes.HasSuffix(out, []byte("\n")) {
		t.Fatalf("output does not end with a newline")
	}
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v: %s", len(recs)+1, err, sc.Bytes())
		}
		recs = append(recs, rec)
	}
	return recs
}

// mustID is IDOf(uuid), failing the test on an error.
func mustID(t testing.TB, uuid string) session.ID {
	t.Helper()
	id, err := IDOf(uuid)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
