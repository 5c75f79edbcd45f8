package openrath

import (
	"encoding/json"
	"testing"

	"github.com/openrath/rath/session"
)

// TestToolErrorsOut exports our tool errors and reads them back: each is
// written in the original's failure shape, with the original's name for
// the kinds it names differently, an error with content keeps its error
// sign (the content goes into detail), and importing the file gives back
// the same results.
func TestToolErrorsOut(t *testing.T) {
	results := []session.ToolResult{
		{CallID: "c1", Tool: "sh", Error: &session.ToolError{Kind: session.ToolErrExecution, Message: "exit status 2"}},
		{CallID: "c2", Tool: "sh", Error: &session.ToolError{Kind: session.ToolErrTimeout, Message: "after 30s"}, Content: "partial <output> & more"},
		{CallID: "c3", Tool: "add", Error: &session.ToolError{Kind: session.ToolErrInvalidArgs, Message: "a: want a number"}},
		{CallID: "c4", Tool: "exists", Content: `{"ok": false}`}, // a success that says false
		{CallID: "c5", Tool: "sh", Error: &session.ToolError{Kind: session.ToolErrRejected, Message: "no"}, Content: "{\"ok\": false, \"error_kind\": \"x\"}"},
	}
	var calls []session.ToolCall
	for _, r := range results {
		calls = append(calls, session.ToolCall{ID: r.CallID, Name: r.Tool, Args: json.RawMessage(`{}`)})
	}
	s := session.FromUser("go").Append(session.Assistant("", calls...))
	for _, r := range results {
		s = s.Append(session.Result(r))
	}
	out := encodeBytes(t, s)
	recs := records(t, out)

	want := []map[string]any{
		{"ok": false, "error_kind": "tool_execution_exception", "message": "exit status 2"},
		{"ok": false, "error_kind": "timeout", "message": "after 30s", "detail": "partial <output> & more"},
		{"ok": false, "error_kind": "invalid_tool_arguments", "message": "a: want a number"},
		{"ok": false},
		{"ok": false, "error_kind": "x"}, // already in the failure shape: as it is
	}
	for i, w := range want {
		content := recs[3+i]["payload"].(map[string]any)["content"].(string)
		var got map[string]any
		if err := json.Unmarshal([]byte(content), &got); err != nil {
			t.Fatalf("result %d content %q: %v", i, content, err)
		}
		if !jsonEqual(got, w) {
			t.Errorf("result %d content %s, want %v", i, content, w)
		}
	}

	// Back here each result is as it was; the last, whose content was a
	// failure body already, keeps its sign and takes the kind and message
	// that body gives.
	results[4].Error = &session.ToolError{Kind: "x"}
	back := decodeBytes(t, out)
	i := 0
	for _, c := range back.All() {
		if c.ToolResult == nil {
			continue
		}
		got, w := c.ToolResult, results[i]
		if got.Content != w.Content || (got.Error == nil) != (w.Error == nil) || got.Error != nil && *got.Error != *w.Error {
			t.Errorf("result %d back as %+v (error %+v), want %+v (error %+v)", i, got, got.Error, w, w.Error)
		}
		i++
	}
	if i != len(results) {
		t.Errorf("%d results back, want %d", i, len(results))
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestParseFailure covers what counts as the original's failure body.
func TestParseFailure(t *testing.T) {
	for content, want := range map[string]*failure{
		`{"ok": false, "error_kind": "unknown_tool", "message": "unknown tool 'x'"}`: {Kind: "unknown_tool", Message: "unknown tool 'x'"},
		` {"ok":false,"error_kind":"timeout","message":"slow","detail":"30s"} `:      {Kind: "timeout", Message: "slow", Detail: "30s"},
		`{"ok": false, "error_kind": "k", "message": 7, "detail": {"a": 1}}`:         {Kind: "k", Message: "7", Detail: `{"a":1}`},
		`{"ok": false, "error_kind": "k"}`:                                           {Kind: "k"},
		`{"ok": false}`:                                                              nil, // a boolean result
		`{"ok": false, "error_kind": ""}`:                                            nil,
		`{"ok": true, "error_kind": "k"}`:                                            nil,
		`{"ok": "false", "error_kind": "k"}`:                                         nil,
		`{"error_kind": "k"}`:                                                        nil,
		`[{"ok": false, "error_kind": "k"}]`:                                         nil,
		`{"ok": false, "error_kind": "k"`:                                            nil,
		`plain text`:                                                                 nil,
		``:                                                                           nil,
	} {
		got, ok := parseFailure(content)
		if ok != (want != nil) || ok && got != *want {
			t.Errorf("parseFailure(%q) = %+v, %v; want %+v", content, got, ok, want)
		}
	}
}
