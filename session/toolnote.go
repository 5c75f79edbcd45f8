package session

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Tool note kinds recorded in ToolNote.Kind: what the runtime, or the tool's
// own plumbing, has to say about a result that is not part of it. Tools may
// add their own kinds (lower-case letters, digits and underscores).
const (
	ToolNoteRestarted   = "restarted"   // the tool's server process was started again before the call
	ToolNoteReconnected = "reconnected" // a new session with the tool's server was opened before the call
	ToolNoteTruncated   = "truncated"   // the content was cut to the result limit (FullSize, FullHash)
	ToolNoteRedacted    = "redacted"    // secret values were replaced in the content or error
	ToolNoteResent      = "resent"      // the call never reached its server and was sent once more
)

// Limits on tool notes: a note is a remark, not a second result.
const (
	MaxToolNotes       = 16   // notes on one result
	MaxToolNoteKindLen = 32   // bytes of a kind
	MaxToolNoteTextLen = 2048 // bytes of a note's text
)

// ToolNote is evidence about a tool result that is not the tool's output: a
// server restarted before the call, the content cut to the limit, a secret
// scrubbed from it. Notes have a field of their own (ToolResult.Notes) so that
// Content is always what the tool returned, byte for byte (up to a cut,
// which a truncated note records).
type ToolNote struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// ValidToolNoteKind reports whether k is a kind a note may have: 1 to
// MaxToolNoteKindLen lower-case letters, digits and underscores, starting
// with a letter.
func ValidToolNoteKind(k string) bool { return validNoteKind(k) }

// ToolNoteOther is the kind NewToolNote gives a note whose kind is not
// valid (the given kind then leads its text).
const ToolNoteOther = "other"

func (n *ToolNote) validate() error {
	if !validNoteKind(n.Kind) {
		return fmt.Errorf("%w: tool note kind %.40q (want 1 to %d of a-z, 0-9, _, starting with a letter)", ErrInvalid, n.Kind, MaxToolNoteKindLen)
	}
	switch {
	case n.Text == "":
		return fmt.Errorf("%w: %s tool note has no text", ErrInvalid, n.Kind)
	case len(n.Text) > MaxToolNoteTextLen:
		return fmt.Errorf("%w: %s tool note text is %d bytes (at most %d)", ErrInvalid, n.Kind, len(n.Text), MaxToolNoteTextLen)
	case !utf8.ValidString(n.Text):
		return fmt.Errorf("%w: %s tool note text is not UTF-8", ErrInvalid, n.Kind)
	}
	return nil
}

func validNoteKind(k string) bool {
	if k == "" || len(k) > MaxToolNoteKindLen || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := range len(k) {
		c := k[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func validNotes(ns []ToolNote) error {
	if len(ns) > MaxToolNotes {
		return fmt.Errorf("%w: %d tool notes (at most %d)", ErrInvalid, len(ns), MaxToolNotes)
	}
	for i := range ns {
		if err := ns[i].validate(); err != nil {
			return err
		}
	}
	return nil
}

// NewToolNote returns a note of kind with text that a chunk always
// accepts: the text cut (on a rune boundary, invalid UTF-8 replaced) to
// MaxToolNoteTextLen, an empty text replaced by the kind, and a kind that
// is not valid (ValidToolNoteKind) replaced by ToolNoteOther, the text then
// beginning with it quoted.
func NewToolNote(kind, text string) ToolNote {
	if !validNoteKind(kind) {
		text = fmt.Sprintf("%.40q: %s", kind, text)
		kind = ToolNoteOther
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) > MaxToolNoteTextLen {
		cut := MaxToolNoteTextLen - len("…")
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	if text == "" {
		text = kind
	}
	return ToolNote{Kind: kind, Text: text}
}

// ToolNotesHeading opens the part NotesPart writes.
const ToolNotesHeading = "[rath notes on this tool result; not part of the tool's output]"

// NotesPart is the text of the separate part a provider sends after a tool
// result's content when it has notes (Message.Notes): a heading saying the
// lines are the runtime's, then one "- kind: text" line a note. It is ""
// without notes. The content itself is never changed.
func NotesPart(ns []ToolNote) string {
	if len(ns) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(ToolNotesHeading)
	for _, n := range ns {
		b.WriteString("\n- ")
		b.WriteString(n.Kind)
		b.WriteString(": ")
		b.WriteString(n.Text)
	}
	return b.String()
}
