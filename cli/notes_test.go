package cli

import (
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// rath show tells a tool result's notes: their kinds in the chunk's
// summary, beside the content as the tool returned it, and each note in
// full after the table.
func TestShowToolNotes(t *testing.T) {
	notes := []session.ToolNote{
		{Kind: session.ToolNoteRestarted, Text: "mcp server fs restarted before this call: the process exited (signal: killed)"},
		{Kind: session.ToolNoteTruncated, Text: "5 of 9 bytes shown"},
	}
	s := session.FromUser("go").Append(
		session.Assistant("", session.NewToolCall("c1", "read", `{}`)),
		session.Result(session.ToolResult{CallID: "c1", Tool: "read", Content: `{"a":`, Notes: notes}),
		session.Result(session.ToolResult{CallID: "c2", Tool: "read", Content: "plain"}))
	if got := summary(s.Chunk(2)); got != `read [restarted, truncated] → {"a":` {
		t.Errorf("summary = %q", got)
	}
	if got := summary(s.Chunk(3)); got != "read → plain" {
		t.Errorf("summary without notes = %q", got)
	}
	var b strings.Builder
	if err := writeNotes(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "\nnotes\n#  KIND       NOTE\n" +
		"2  restarted  mcp server fs restarted before this call: the process exited (signal: killed)\n" +
		"2  truncated  5 of 9 bytes shown\n"
	if b.String() != want {
		t.Errorf("notes section:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := writeNotes(&b, session.FromUser("go")); err != nil || b.Len() != 0 {
		t.Errorf("a session without notes printed %q, %v", b.String(), err)
	}
}
