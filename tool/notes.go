package tool

import (
	"slices"
	"sync"

	"github.com/openrath/rath/session"
)

// Notes collects the evidence notes of one call (session.ToolNote): what a
// tool, or the plumbing under it, has to say about its result that is not
// the result — a server started again before the call, a secret scrubbed.
// The agent gives each call its own Notes (Env.Notes) and records them in
// the call's tool_result, beside the content, never in it. It is safe for
// concurrent use; the zero Notes is empty and ready.
type Notes struct {
	mu    sync.Mutex
	notes []session.ToolNote
}

// Add records a note of kind (one of the session.ToolNote* kinds, or a
// tool's own: lower-case letters, digits, underscores). The text is cut to
// session.MaxToolNoteTextLen, an invalid kind recorded as
// session.ToolNoteOther (session.NewToolNote); notes past
// session.MaxToolNotes are dropped, and so is a repeat of the last one.
func (n *Notes) Add(kind, text string) {
	if n == nil {
		return
	}
	note := session.NewToolNote(kind, text)
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.notes) >= session.MaxToolNotes || (len(n.notes) > 0 && n.notes[len(n.notes)-1] == note) {
		return
	}
	n.notes = append(n.notes, note)
}

// List returns the notes recorded so far, in order (nil for none).
func (n *Notes) List() []session.ToolNote {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.notes)
}

// Note records an evidence note about this call's result (see Notes). It
// does nothing when the caller gave the call no Notes (a tool called
// directly, outside an agent). A tool never writes such remarks into the
// string it returns: that string is its output, recorded byte for byte.
func (e Env) Note(kind, text string) { e.Notes.Add(kind, text) }
