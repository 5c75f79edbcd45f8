package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// callNoted calls tl as an agent does, collecting the call's notes.
func callNoted(t *testing.T, tl tool.Tool, args string) (string, []session.ToolNote, error) {
	t.Helper()
	env := tool.Env{Notes: new(tool.Notes)}
	out, err := tl.Call(context.Background(), env, json.RawMessage(args))
	return out, env.Notes.List(), err
}

func mustCallNoted(t *testing.T, tl tool.Tool, args string) (string, []session.ToolNote) {
	t.Helper()
	out, notes, err := callNoted(t, tl, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Name(), args, err)
	}
	return out, notes
}

// checkNote checks that notes are one, saying the session was started
// again (restarted over stdio, reconnected over HTTP), and returns it. The
// note is evidence of its own: the result beside it is the server's.
func checkNote(t *testing.T, cfg ServerConfig, notes []session.ToolNote) session.ToolNote {
	t.Helper()
	kind := session.ToolNoteReconnected
	if len(cfg.Command) > 0 {
		kind = session.ToolNoteRestarted
	}
	if len(notes) != 1 || notes[0].Kind != kind || !strings.HasPrefix(notes[0].Text, "mcp server "+cfg.Name+" "+kind+" before this call: ") {
		t.Errorf("notes = %+v, want one that the server was %s", notes, kind)
		return session.ToolNote{}
	}
	t.Logf("note: %s", notes[0].Text)
	return notes[0]
}

// noNotes checks that a call had nothing to note.
func noNotes(t *testing.T, notes []session.ToolNote) {
	t.Helper()
	if len(notes) != 0 {
		t.Errorf("notes = %+v, want none", notes)
	}
}
