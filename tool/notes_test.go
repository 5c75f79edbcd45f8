package tool

import (
	"fmt"
	"sync"
	"testing"

	"github.com/openrath/rath/session"
)

func TestNotes(t *testing.T) {
	var none Env
	none.Note(session.ToolNoteRedacted, "nobody records it") // no Notes: nothing happens
	if none.Notes.List() != nil {
		t.Fatal("a nil Notes lists notes")
	}

	env := Env{Notes: new(Notes)}
	env.Note(session.ToolNoteReconnected, "new session")
	env.Note(session.ToolNoteReconnected, "new session") // a repeat
	env.Note("Bad Kind", "kept, as other")
	var wg sync.WaitGroup
	for i := range 2 * session.MaxToolNotes {
		wg.Go(func() { env.Note("n", fmt.Sprint(i)) })
	}
	wg.Wait()
	got := env.Notes.List()
	if len(got) != session.MaxToolNotes || got[0] != (session.ToolNote{Kind: session.ToolNoteReconnected, Text: "new session"}) ||
		got[1] != (session.ToolNote{Kind: session.ToolNoteOther, Text: `"Bad Kind": kept, as other`}) {
		t.Fatalf("notes %+v", got)
	}
	if _, err := session.New().TryAppend(session.Result(session.ToolResult{CallID: "c", Tool: "t", Notes: got})); err != nil {
		t.Fatalf("the notes do not fit a chunk: %v", err)
	}
}
