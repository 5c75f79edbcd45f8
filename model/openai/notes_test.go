package openai

import (
	"net/http"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// A tool result's notes go out as a text part of their own after the
// content, which is sent as the tool returned it; a result without notes
// is sent as a plain string, as before.
func TestToolNotesSentAsTheirOwnPart(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(w, text("ok"), finish("stop"), done) })
	notes := []session.ToolNote{{Kind: session.ToolNoteTruncated, Text: "4 of 9 bytes shown"}}
	req := &model.Request{Model: "gpt-test", Messages: []session.Message{
		{Role: session.RoleUser, Content: "go"},
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{session.NewToolCall("c1", "f", `{}`), session.NewToolCall("c2", "f", `{}`),
			session.NewToolCall("c3", "f", `{}`)}},
		{Role: session.RoleTool, Content: `{"a":`, ToolCallID: "c1", Name: "f", Notes: notes},
		{Role: session.RoleTool, ToolCallID: "c2", Name: "f", Notes: notes},
		{Role: session.RoleTool, Content: "plain", ToolCallID: "c3", Name: "f"},
	}}
	if _, _, err := call(t, f.provider(t), req); err != nil {
		t.Fatal(err)
	}
	part := quote(session.NotesPart(notes))
	eqJSON(t, "messages", f.requests()[0].body["messages"], `[
		{"role":"user","content":"go"},
		{"role":"assistant","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},
			{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}},
			{"id":"c3","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","content":[{"type":"text","text":"{\"a\":"},{"type":"text","text":`+part+`}],"tool_call_id":"c1"},
		{"role":"tool","content":[{"type":"text","text":`+part+`}],"tool_call_id":"c2"},
		{"role":"tool","content":"plain","tool_call_id":"c3"}]`)
}
