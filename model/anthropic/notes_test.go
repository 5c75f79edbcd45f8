package anthropic

import (
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// A tool result's notes go out as a text block of their own after the
// content, which is sent as the tool returned it.
func TestToolNotesSentAsTheirOwnBlock(t *testing.T) {
	srv := newServer(t, streamOK(textStream("ok")))
	notes := []session.ToolNote{{Kind: session.ToolNoteRestarted, Text: "mcp server fs restarted before this call: killed"}}
	req := &model.Request{Model: "claude-test", Messages: []session.Message{
		{Role: session.RoleUser, Content: "look"},
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{session.NewToolCall("toolu_1", "read", `{}`), session.NewToolCall("toolu_2", "read", `{}`)}},
		{Role: session.RoleTool, ToolCallID: "toolu_1", Name: "read", Content: `{"a":1}`, Notes: notes},
		{Role: session.RoleTool, ToolCallID: "toolu_2", Name: "read", Content: "plain"},
	}}
	if _, _, err := attempt(t, newProvider(t, srv.URL), req); err != nil {
		t.Fatal(err)
	}
	results := path(t, srv.body(t, 0)["messages"], 2, "content").([]any)
	first := path(t, results, 0, "content").([]any)
	if len(first) != 2 || path(t, first, 0, "text") != `{"a":1}` || path(t, first, 1, "text") != session.NotesPart(notes) {
		t.Fatalf("the noted result %s", js(results[0]))
	}
	if second := path(t, results, 1, "content").([]any); len(second) != 1 || path(t, second, 0, "text") != "plain" {
		t.Fatalf("the plain result %s", js(results[1]))
	}
}
