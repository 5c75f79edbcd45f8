package session

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func notedResult() Chunk {
	return Result(ToolResult{CallID: "c1", Tool: "fetch", Content: `{"ok":true}`, Notes: []ToolNote{
		{Kind: ToolNoteRestarted, Text: "mcp server fs restarted before this call: exit status 1"},
		{Kind: ToolNoteTruncated, Text: "10 of 20 bytes shown"},
	}}).WithTime(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
}

// Notes survive the JSONL codec and the fast chunk decoder, and the content
// beside them is untouched.
func TestToolNotesRoundTrip(t *testing.T) {
	s := FromUser("go").Append(Assistant("", NewToolCall("c1", "fetch", `{}`)), notedResult())
	var buf bytes.Buffer
	if err := Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Head() != s.Head() {
		t.Fatalf("head %s, want %s", back.Head(), s.Head())
	}
	got, want := back.Chunk(2).ToolResult, s.Chunk(2).ToolResult
	if got.Content != `{"ok":true}` || len(got.Notes) != 2 || got.Notes[0] != want.Notes[0] || got.Notes[1] != want.Notes[1] {
		t.Fatalf("decoded %+v", got)
	}
	canon, err := appendCanonicalChunk(nil, new(s.Chunk(2)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(canon, []byte(`"notes":[{"kind":"restarted","text":"mcp server fs restarted before this call: exit status 1"},{"kind":"truncated"`)) {
		t.Fatalf("canonical encoding: %s", canon)
	}
	if _, err := DecodeChunkJSON(canon); err != nil {
		t.Fatal(err)
	}
}

// A result without notes is encoded as before notes existed, so its id
// (and every recorded chain) is unchanged; an empty list counts as none.
func TestToolResultWithoutNotesKeepsItsEncoding(t *testing.T) {
	base := ToolResult{CallID: "c1", Tool: "fetch", Content: "x"}
	withEmpty := base
	withEmpty.Notes = []ToolNote{}
	a, err := appendCanonicalChunk(nil, new(Result(base).WithTime(time.Unix(0, 0))))
	if err != nil {
		t.Fatal(err)
	}
	b, err := appendCanonicalChunk(nil, new(Result(withEmpty).WithTime(time.Unix(0, 0))))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"kind":"tool_result","tier":"transient","time":"1970-01-01T00:00:00Z","tool_result":{"call_id":"c1","content":"x","tool":"fetch"}}`
	if string(a) != want || string(b) != want {
		t.Fatalf("encodings\n%s\n%s\nwant %s", a, b, want)
	}
}

func TestToolNotesValidated(t *testing.T) {
	many := make([]ToolNote, MaxToolNotes+1)
	for i := range many {
		many[i] = ToolNote{Kind: ToolNoteRedacted, Text: "scrubbed"}
	}
	for name, ns := range map[string][]ToolNote{
		"empty kind":     {{Text: "x"}},
		"upper-case":     {{Kind: "Restarted", Text: "x"}},
		"space":          {{Kind: "re started", Text: "x"}},
		"leading digit":  {{Kind: "1x", Text: "x"}},
		"long kind":      {{Kind: strings.Repeat("k", MaxToolNoteKindLen+1), Text: "x"}},
		"empty text":     {{Kind: ToolNoteTruncated}},
		"long text":      {{Kind: ToolNoteTruncated, Text: strings.Repeat("t", MaxToolNoteTextLen+1)}},
		"invalid UTF-8":  {{Kind: ToolNoteTruncated, Text: "bad \xff"}},
		"too many notes": many,
	} {
		_, err := New().TryAppend(Result(ToolResult{CallID: "c", Tool: "t", Notes: ns}))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	ok := []ToolNote{{Kind: "own_kind_2", Text: "a tool's own"}, NewToolNote(ToolNoteRedacted, strings.Repeat("é", MaxToolNoteTextLen))}
	if _, err := New().TryAppend(Result(ToolResult{CallID: "c", Tool: "t", Notes: ok})); err != nil {
		t.Fatal(err)
	}
}

func TestNewToolNoteFitsAChunk(t *testing.T) {
	n := NewToolNote(ToolNoteRestarted, strings.Repeat("é", MaxToolNoteTextLen)+"\xff")
	if err := n.validate(); err != nil || !strings.HasSuffix(n.Text, "é…") {
		t.Fatalf("%v: %d bytes …%q", err, len(n.Text), n.Text[len(n.Text)-8:])
	}
	if n := NewToolNote(ToolNoteRedacted, ""); n.Text != ToolNoteRedacted {
		t.Fatalf("empty text: %+v", n)
	}
	if n := NewToolNote("Bad Kind", "x"); n.Kind != ToolNoteOther || n.Text != `"Bad Kind": x` || n.validate() != nil {
		t.Fatalf("bad kind: %+v", n)
	}
}

// The model's view keeps the content as the tool returned it and carries
// the notes apart, for a provider to send as a labelled part of their own.
func TestToolNotesApartInTranscript(t *testing.T) {
	s := FromUser("go").Append(Assistant("", NewToolCall("c1", "fetch", `{}`)), notedResult())
	m := s.Transcript()[2]
	if m.Content != `{"ok":true}` || len(m.Notes) != 2 {
		t.Fatalf("message %+v", m)
	}
	part := NotesPart(m.Notes)
	want := ToolNotesHeading + "\n- restarted: mcp server fs restarted before this call: exit status 1\n- truncated: 10 of 20 bytes shown"
	if part != want {
		t.Fatalf("part %q\nwant %q", part, want)
	}
	if NotesPart(nil) != "" {
		t.Fatal("a part without notes")
	}
}
