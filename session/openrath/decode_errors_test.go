package openrath

import (
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

func TestDecodeErrors(t *testing.T) {
	const (
		hdr   = `{"record_type":"header","schema_version":1,"id":"3f0c2a1e-8a4b-4c1d-9e2f-5a6b7c8d9e0f","created_at":"2026-05-25T10:11:12+00:00"}`
		sys0  = `{"record_type":"chunk","index":0,"kind":"system","payload":{"content":"hi"}}`
		user1 = `{"record_type":"chunk","index":1,"kind":"user","payload":{"content":"hello"}}`
		trl1  = `{"record_type":"trailer","closed_at":"2026-05-25T10:11:13+00:00","final_chunk_count":1,"cumulative_usage":null}`
	)
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	chunk := func(kind, payload string) string {
		return `{"record_type":"chunk","index":0,"kind":"` + kind + `","payload":` + payload + `}`
	}
	for _, tc := range []struct {
		name  string
		in    string
		want  error
		line  int
		match string
	}{
		{"empty file", "", session.ErrCorrupt, 1, "no header"},
		{"blank lines only", "\n\n", session.ErrCorrupt, 1, "no header"},
		{"invalid JSON", lines(hdr, `{"record_type":`, sys0), session.ErrCorrupt, 2, "invalid JSON"},
		{"array record", lines(hdr, `[1,2]`), session.ErrCorrupt, 2, "not an object"},
		{"string record", lines(`"header"`), session.ErrCorrupt, 1, "not an object"},
		{"null record", lines(hdr, `null`), session.ErrCorrupt, 2, "not an object"},
		{"no record_type", lines(hdr, `{"index":0}`), session.ErrCorrupt, 2, "no record_type"},
		{"record_type not a string", lines(hdr, `{"record_type":7}`), session.ErrCorrupt, 2, "want string"},
		{"duplicate header", lines(hdr, sys0, hdr), session.ErrCorrupt, 3, "duplicate header"},
		{"chunk before header", lines(sys0, hdr), session.ErrCorrupt, 1, "before the header"},
		{"trailer before header", lines(trl1, hdr), session.ErrCorrupt, 1, "before the header"},
		{"unknown record_type", lines(hdr, `{"record_type":"footer"}`), session.ErrCorrupt, 2, `unknown record_type "footer"`},
		{"missing header", lines("", ""), session.ErrCorrupt, 1, "no header"},
		{"schema version 2", lines(strings.Replace(hdr, `"schema_version":1`, `"schema_version":2`, 1)), session.ErrVersion, 1, "schema_version 2"},
		{"no schema version", lines(strings.Replace(hdr, `"schema_version":1,`, ``, 1)), session.ErrCorrupt, 1, "no schema_version"},
		{"schema version string", lines(strings.Replace(hdr, `"schema_version":1`, `"schema_version":"1"`, 1)), session.ErrCorrupt, 1, "want integer"},
		{"header without id", lines(`{"record_type":"header","schema_version":1}`), session.ErrCorrupt, 1, "no id"},
		{"id not a UUID", lines(strings.Replace(hdr, `3f0c2a1e-8a4b-4c1d-9e2f-5a6b7c8d9e0f`, `session-1`, 1)), session.ErrCorrupt, 1, `"session-1" is not a UUID`},
		{"parent is itself", lines(strings.Replace(hdr, `}`, `,"parent_session_ids":["3F0C2A1E-8A4B-4C1D-9E2F-5A6B7C8D9E0F"]}`, 1)), ErrCycle, 1, "name the session itself"},
		{"bad entrypoint", lines(strings.Replace(hdr, `}`, `,"sandbox_backend":"local","sandbox_spec":{"entrypoint":"sh"}}`, 1)), session.ErrCorrupt, 1, `"entrypoint"`},
		{"bad closed_at", lines(hdr, sys0, strings.Replace(trl1, `2026-05-25T10:11:13+00:00`, `later`, 1)), session.ErrCorrupt, 3, "closed_at"},
		{"bad created_at", lines(strings.Replace(hdr, `2026-05-25T10:11:12+00:00`, `yesterday`, 1)), session.ErrCorrupt, 1, "created_at"},
		{"bad lineage extras", lines(strings.Replace(hdr, `}`, `,"lineage_extras":[["k"]]}`, 1)), session.ErrCorrupt, 1, "lineage_extras[0]"},
		{"bad parents", lines(strings.Replace(hdr, `}`, `,"parent_session_ids":"x"}`, 1)), session.ErrCorrupt, 1, "parent_session_ids"},
		{"bad timeout", lines(strings.Replace(hdr, `}`, `,"sandbox_backend":"local","sandbox_spec":{"timeout_seconds":-1}}`, 1)), session.ErrCorrupt, 1, "timeout_seconds"},
		{"bad env", lines(strings.Replace(hdr, `}`, `,"sandbox_backend":"local","sandbox_spec":{"env":["A"]}}`, 1)), session.ErrCorrupt, 1, `"env"`},
		{"unknown chunk kind", lines(hdr, chunk("thought", `{"content":"x"}`)), session.ErrCorrupt, 2, `unknown chunk kind "thought"`},
		{"missing chunk kind", lines(hdr, `{"record_type":"chunk","index":0,"payload":{}}`), session.ErrCorrupt, 2, "no kind"},
		{"payload array", lines(hdr, chunk("user", `["x"]`)), session.ErrCorrupt, 2, "payload is array"},
		{"payload missing", lines(hdr, `{"record_type":"chunk","index":0,"kind":"user"}`), session.ErrCorrupt, 2, "payload is missing"},
		{"user content number", lines(hdr, chunk("user", `{"content":5}`)), session.ErrCorrupt, 2, `"content" is number 5, want string`},
		{"system content missing", lines(hdr, chunk("system", `{}`)), session.ErrCorrupt, 2, `no "content"`},
		{"assistant content object", lines(hdr, chunk("assistant", `{"content":{}}`)), session.ErrCorrupt, 2, "want string"},
		{"tool_calls not a list", lines(hdr, chunk("assistant", `{"content":null,"tool_calls":{}}`)), session.ErrCorrupt, 2, "tool_calls"},
		{"tool call without function", lines(hdr, chunk("assistant", `{"tool_calls":[{"id":"a"}]}`)), session.ErrCorrupt, 2, `tool_calls[0]: no "function"`},
		{"tool call without name", lines(hdr, chunk("assistant", `{"tool_calls":[{"id":"a","function":{"arguments":""}}]}`)), session.ErrCorrupt, 2, "no name"},
		{"tool call arguments object", lines(hdr, chunk("assistant", `{"tool_calls":[{"id":"a","function":{"name":"f","arguments":{}}}]}`)), session.ErrCorrupt, 2, `"arguments"`},
		{"duplicate tool call ids", lines(hdr, chunk("assistant", `{"tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"a","function":{"name":"g"}}]}`)), session.ErrInvalid, 2, "appears twice"},
		{"tool result without id", lines(hdr, chunk("tool_result", `{"name":"f","content":"{}"}`)), session.ErrCorrupt, 2, `no "tool_call_id"`},
		{"tool result empty name", lines(hdr, chunk("tool_result", `{"tool_call_id":"a","name":"","content":"{}"}`)), session.ErrCorrupt, 2, "names no tool"},
		{"tool result content list", lines(hdr, chunk("tool_result", `{"tool_call_id":"a","name":"f","content":[]}`)), session.ErrCorrupt, 2, `"content"`},
		{"index not an integer", lines(hdr, `{"record_type":"chunk","index":"0","kind":"user","payload":{"content":"x"}}`), session.ErrCorrupt, 2, "want integer"},
		{"index missing", lines(hdr, `{"record_type":"chunk","kind":"user","payload":{"content":"x"}}`), session.ErrCorrupt, 2, "no index"},
		{"index skips", lines(hdr, sys0, strings.Replace(user1, `"index":1`, `"index":2`, 1)), session.ErrCorrupt, 3, "chunk index 2, want 1"},
		{"index repeats", lines(hdr, sys0, strings.Replace(user1, `"index":1`, `"index":0`, 1)), session.ErrCorrupt, 3, "chunk index 0, want 1"},
		{"final count mismatch", lines(hdr, sys0, user1, trl1), session.ErrCorrupt, 4, "trailer says 1 chunks, the file has 2"},
		{"usage not an object", lines(hdr, sys0, strings.Replace(trl1, `"cumulative_usage":null`, `"cumulative_usage":3`, 1)), session.ErrCorrupt, 3, "cumulative_usage"},
		{"negative usage", lines(hdr, sys0, strings.Replace(trl1, `null`, `{"prompt_tokens":-1}`, 1)), session.ErrCorrupt, 3, "negative"},
		{"chunk after trailer", lines(hdr, sys0, trl1, user1), session.ErrCorrupt, 4, "after the trailer on line 3"},
		{"second trailer", lines(hdr, sys0, trl1, "", trl1), session.ErrCorrupt, 5, "after the trailer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Decode(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("got session with %d chunks, want error", s.Len())
			}
			t.Log(err)
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q does not wrap %v", err, tc.want)
			}
			if !errors.Is(err, session.ErrCorrupt) && !errors.Is(err, session.ErrVersion) {
				t.Errorf("error %q wraps neither ErrCorrupt nor ErrVersion", err)
			}
			if got := decodeErrorLine(t, err); got != tc.line {
				t.Errorf("error %q names line %d, want %d", err, got, tc.line)
			}
			if !strings.Contains(err.Error(), tc.match) {
				t.Errorf("error %q does not mention %q", err, tc.match)
			}
		})
	}
}
