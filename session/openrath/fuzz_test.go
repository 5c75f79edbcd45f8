package openrath

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/openrath/rath/session"
)

// fuzzFiles are the seed files: hand-made, written in the original's shape,
// and written by the original itself.
var fuzzFiles = []string{"basic.jsonl", "partial.jsonl", "torn.jsonl", "edge_closed.jsonl", "edge_crashed.jsonl",
	"py/py_loop.jsonl", "py/py_fork_point.jsonl", "py/py_branch_a.jsonl", "py/py_branch_b.jsonl", "py/py_merge.jsonl", "py/py_create.jsonl"}

// FuzzDecode feeds Decode arbitrary bytes. It must never panic; an error
// must be a *session.DecodeError naming a line; a session must verify, and
// export to a file that imports as the same session (id, lineage, the
// model's view, usage) and exports to the same bytes again.
func FuzzDecode(f *testing.F) {
	for _, name := range fuzzFiles {
		b := readFixture(f, name)
		f.Add(b)
		f.Add(bytes.TrimSuffix(b, []byte("\n")))
		f.Add(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")))
	}
	b := readFixture(f, "basic.jsonl")
	f.Add(bytes.Replace(b, []byte(`"index": 3`), []byte(`"index": 4`), 1))
	f.Add(bytes.Replace(b, []byte(`"final_chunk_count": 6`), []byte(`"final_chunk_count": 7`), 1))
	f.Add(bytes.Replace(b, []byte(`"arguments": ""`), []byte(`"arguments": "{not json"`), 1))
	f.Add(bytes.Replace(b, []byte(`"sandbox_handle_id": null`), []byte(`"sandbox_handle_id": "sbx-1"`), 1))
	f.Add(bytes.Replace(b, []byte(`"schema_version": 1`), []byte(`"schema_version": 2`), 1))
	f.Add(bytes.Replace(b, []byte(`"lineage_extras": [`), []byte(`"lineage_extras": [["rath.system_prompt", {"row": 1, "node": "0/a", "content": "be kind"}], `), 1))
	f.Add(bytes.Replace(b, []byte(`"11111111-2222-4333-8444-555555555555"`), []byte(`"3f0c2a1e-8a4b-4c1d-9e2f-5a6b7c8d9e0f"`), 1))
	f.Add([]byte(`{"record_type":"header","schema_version":1,"id":"x"}` + "\n"))
	f.Add([]byte(`{"record_type":"header","schema_version":1,"id":"00000000000000000000000000000000"}` + "\n" +
		`{"record_type":"chunk","index":0,"kind":"tool_result","payload":{"tool_call_id":"a","name":"f","content":"{\"ok\":false,\"error_kind\":\"execution\",\"message\":\"m\",\"detail\":\"d\"}"}}` + "\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Decode(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, session.ErrCorrupt) && !errors.Is(err, session.ErrVersion) {
				t.Fatalf("error %q wraps neither session.ErrCorrupt nor session.ErrVersion", err)
			}
			if de, ok := errors.AsType[*session.DecodeError](err); !ok || de.Line < 1 {
				t.Fatalf("error %q (%T) is not a *session.DecodeError naming a line", err, err)
			}
			return
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("imported session does not verify: %v", err)
		}
		var out bytes.Buffer
		if err := Encode(&out, s); err != nil {
			t.Fatalf("Encode: %v", err)
		}
		back, err := Decode(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out.Bytes())
		}
		if back.ID() != s.ID() || !slices.Equal(back.Lineage().Parents, s.Lineage().Parents) {
			t.Fatalf("re-import is %s %v, want %s %v", back.ID(), back.Lineage().Parents, s.ID(), s.Lineage().Parents)
		}
		if got, want := noIDs(back.Transcript()), noIDs(s.Transcript()); !reflect.DeepEqual(got, want) {
			t.Fatalf("transcript changed in round trip:\n got %+v\nwant %+v", got, want)
		}
		if back.Usage() != s.Usage() {
			t.Fatalf("usage changed in round trip: %v, want %v", back.Usage(), s.Usage())
		}
		var again bytes.Buffer
		if err := Encode(&again, back); err != nil {
			t.Fatalf("second Encode: %v", err)
		}
		if !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Fatalf("second export differs:\n%s\nfirst:\n%s", again.Bytes(), out.Bytes())
		}
	})
}

// FuzzIDOf: whatever IDOf accepts is a valid session id that UUIDOf writes
// as a UUID naming the same id.
func FuzzIDOf(f *testing.F) {
	for _, s := range []string{"a69ccb68-11ff-4397-91fb-40e5ad78b929", "{A69CCB68-11FF-4397-91FB-40E5AD78B929}",
		"urn:uuid:a69ccb6811ff439791fb40e5ad78b929", "", "not-a-uuid", "ffffffff-ffff-ffff-ffff-ffffffffffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := IDOf(s)
		if err != nil {
			return
		}
		if err := id.Validate(); err != nil {
			t.Fatalf("IDOf(%q) = %q: %v", s, id, err)
		}
		u := UUIDOf(id)
		if back, err := IDOf(u); err != nil || back != id {
			t.Fatalf("IDOf(UUIDOf(%s)) = %s, %v", id, back, err)
		}
	})
}

// FuzzToolResultContent: a tool row's content survives import and export
// unchanged, whatever it is; a failure body imports as a failed result.
func FuzzToolResultContent(f *testing.F) {
	for _, s := range []string{`{"ok": false, "error_kind": "unknown_tool", "message": "x"}`, `{"ok": false}`,
		`{"ok":false,"error_kind":"tool_execution_exception","message":"m","detail":"d"}`,
		`{"ok":false,"error_kind":"execution","message":"m"}`,
		`{"ok":false,"error_kind":"timeout","message":"m","detail":"{\"ok\":false,\"error_kind\":\"k\"}"}`,
		`{"sum": 42}`, "plain", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		c, te := resultIn(content)
		if (te != nil) != isFailure(content) {
			t.Fatalf("resultIn(%q) error %v, failure body: %v", content, te, isFailure(content))
		}
		if out := resultOut(&session.ToolResult{Content: c, Error: te}); out != content {
			t.Fatalf("resultOut(resultIn(%q)) = %q", content, out)
		}
	})
}

// FuzzPrompt: a PromptKey value parsePrompt accepts is written back by
// Encode's marshalling as a value it reads the same.
func FuzzPrompt(f *testing.F) {
	for _, s := range []string{`{"row":0,"content":"x"}`, `{"row":3,"node":"0/agent:a#1","content":"be <kind> & brief"}`,
		`{"row":-1,"content":"x"}`, `{"row":1.5,"content":"x"}`, `{"row":0,"content":"x","more":1}`, `"text"`, `null`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, ok := parsePrompt(json.RawMessage(raw))
		if !ok {
			return
		}
		back, ok := parsePrompt(marshal(p))
		if !ok || back != p {
			t.Fatalf("parsePrompt(%s) = %+v; written back as %s it reads %+v, %v", raw, p, marshal(p), back, ok)
		}
	})
}
