package openrath

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestRoundTripSemantic imports every file the original wrote (and two
// written in its shape to cover what those do not: repeated and non-string
// extras, an entrypoint and handle, a null spec, a crashed run, a system
// row, failures with and without detail, a boolean result) and exports it
// again: the file that comes out says what the original said, record by
// record and field by field. The one field that changes is documented in
// docs/session-jsonl.md: sandbox env values are never imported, so env is
// written as null. Tool call arguments are compared as JSON: they are
// re-serialised compactly.
func TestRoundTripSemantic(t *testing.T) {
	files := []string{"edge_closed.jsonl", "edge_crashed.jsonl"}
	for name := range readManifest(t) {
		files = append(files, "py/"+name+".jsonl")
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			in := readFixture(t, name)
			s := decodeBytes(t, in)
			out := encodeBytes(t, s)
			sameRecords(t, in, out)
			// The re-export imports as the same session and exports the
			// same bytes again.
			back := decodeBytes(t, out)
			if back.ID() != s.ID() {
				t.Errorf("re-import is %s, want %s", back.ID(), s.ID())
			}
			if again := encodeBytes(t, back); !bytes.Equal(again, out) {
				t.Errorf("second export differs:\n%s\nfirst:\n%s", again, out)
			}
		})
	}
}

// sameRecords fails the test unless got holds the records of want, compared
// as JSON values, but for the normalisations TestRoundTripSemantic names.
func sameRecords(t *testing.T, want, got []byte) {
	t.Helper()
	w, g := lines(want), lines(got)
	if len(w) != len(g) {
		t.Fatalf("%d records, want %d:\n%s", len(g), len(w), got)
	}
	for i := range w {
		wr, gr := normalise(t, w[i]), normalise(t, g[i])
		if wr["record_type"] == "header" {
			spec, _ := wr["sandbox_spec"].(map[string]any)
			gspec, _ := gr["sandbox_spec"].(map[string]any)
			if spec != nil && gspec != nil {
				if gspec["env"] != nil {
					t.Errorf("line %d: env %v exported, want null", i+1, gspec["env"])
				}
				spec["env"] = nil
			}
		}
		if !reflect.DeepEqual(wr, gr) {
			t.Errorf("line %d differs:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
}

// lines splits JSONL into its non-empty lines.
func lines(b []byte) []string {
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// normalise parses a record and replaces each tool call's arguments string
// by the JSON it holds, if it holds JSON.
func normalise(t *testing.T, line string) map[string]any {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	p, _ := rec["payload"].(map[string]any)
	calls, _ := p["tool_calls"].([]any)
	for _, c := range calls {
		fn, _ := c.(map[string]any)["function"].(map[string]any)
		if s, ok := fn["arguments"].(string); ok {
			var v any
			if json.Unmarshal([]byte(s), &v) == nil {
				fn["arguments"] = v
			}
		}
	}
	return rec
}
