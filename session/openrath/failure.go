package openrath

import (
	"bytes"
	"encoding/json"

	"github.com/openrath/rath/session"
)

// failure is the body the original writes into a tool_result row when a
// tool call fails: {"ok": false, "error_kind": …, "message": …, "detail": …}
// (detail optional). See openrath-python.md §2.3.
type failure struct {
	Kind, Message, Detail string
}

// failureRecord is failure as Encode writes it.
type failureRecord struct {
	OK      bool   `json:"ok"`
	Kind    string `json:"error_kind"`
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
}

// parseFailure reports whether content is a failure body: a JSON object
// whose "ok" is false and whose "error_kind" is a non-empty string. A bare
// {"ok": false} is not one: it is how the original reports a boolean tool
// result (workspace_path_exists). A message or detail that is not a string
// is kept as its JSON text.
func parseFailure(content string) (failure, bool) {
	raw := bytes.TrimSpace([]byte(content))
	if len(raw) == 0 || raw[0] != '{' {
		return failure{}, false // not an object: skip the parse
	}
	var obj jsonObject
	if json.Unmarshal(raw, &obj) != nil {
		return failure{}, false
	}
	if ok, present := obj["ok"]; !present || string(bytes.TrimSpace(ok)) != "false" {
		return failure{}, false
	}
	kind, found, err := obj.str("error_kind")
	if err != nil || !found || kind == "" {
		return failure{}, false
	}
	f := failure{Kind: kind}
	if raw, ok := obj["message"]; ok && jsonType(raw) != "null" {
		f.Message = extraValue(raw)
	}
	if raw, ok := obj["detail"]; ok && jsonType(raw) != "null" {
		f.Detail = extraValue(raw)
	}
	return f, true
}

// content is the failure body Encode writes: compact JSON, which the
// original never writes (its json.dumps puts a space after ':' and ','), so
// the decoder can tell a body it wrote itself from one the original wrote.
func (f failure) content() string {
	return string(marshal(failureRecord{Kind: f.Kind, Message: f.Message, Detail: f.Detail}))
}

// resultIn turns a tool_result row's content into a tool result's content
// and error. A failure body becomes a failed result with the error kind in
// our words. The content stays as it was, since it is what the original's
// model saw, unless the body is one Encode wrote: then the content is its
// detail again (empty if it had none), as before the export. (A body that
// resultOut would not write the same way again is kept as it is, so that
// resultOut(resultIn(c)) is always c.)
func resultIn(content string) (string, *session.ToolError) {
	f, ok := parseFailure(content)
	if !ok {
		return content, nil
	}
	te := &session.ToolError{Kind: kindIn(f.Kind), Message: f.Message}
	if content == f.content() && kindOut(te.Kind) == f.Kind && !isFailure(f.Detail) {
		return f.Detail, te
	}
	return content, te
}

// isFailure reports whether content is a failure body.
func isFailure(content string) bool {
	_, ok := parseFailure(content)
	return ok
}

// resultOut is the content of the tool_result row for r. A failed call is
// written in the original's failure shape, whatever content it had going
// into detail, so an error keeps its sign; content that already has that
// shape is written as it is.
func resultOut(r *session.ToolResult) string {
	if r.Error == nil {
		return r.Content
	}
	if isFailure(r.Content) {
		return r.Content
	}
	return failure{Kind: kindOut(r.Error.Kind), Message: r.Error.Message, Detail: r.Content}.content()
}

// kindIn is our error kind for one of the original's. The two that are
// named differently are translated; others (timeout, file_not_found,
// unknown_tool, …) keep their names.
func kindIn(k string) string {
	switch k {
	case "invalid_tool_arguments":
		return session.ToolErrInvalidArgs
	case "tool_execution_exception":
		return session.ToolErrExecution
	}
	return k
}

// kindOut is the original's error kind for one of ours: kindIn inverted.
func kindOut(k string) string {
	switch k {
	case session.ToolErrInvalidArgs:
		return "invalid_tool_arguments"
	case session.ToolErrExecution:
		return "tool_execution_exception"
	}
	return k
}
