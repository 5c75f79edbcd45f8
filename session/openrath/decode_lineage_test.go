package openrath

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// TestDecodeNonUUIDParent: a parent that is not a UUID cannot be an edge
// (the original's loader drops it too), but the file keeps it for the way
// back.
func TestDecodeNonUUIDParent(t *testing.T) {
	in := strings.Replace(string(readFixture(t, "py/py_fork_point.jsonl")),
		`"parent_session_ids": ["a69ccb68-11ff-4397-91fb-40e5ad78b929"]`,
		`"parent_session_ids": ["a69ccb68-11ff-4397-91fb-40e5ad78b929", "made-up"]`, 1)
	s := decodeBytes(t, []byte(in))
	if want := []session.ID{mustID(t, "a69ccb68-11ff-4397-91fb-40e5ad78b929")}; !slices.Equal(s.Lineage().Parents, want) {
		t.Errorf("parents %v, want %v", s.Lineage().Parents, want)
	}
	out := encodeBytes(t, s)
	if !bytes.Contains(out, []byte(`"parent_session_ids":["a69ccb68-11ff-4397-91fb-40e5ad78b929","made-up"]`)) {
		t.Errorf("export lost a parent:\n%s", lines(out)[0])
	}
}

// TestDecodeCrashedIsPrefix: the partial file of a run (no trailer, fewer
// rows) imports as a prefix of the closed file's import, so a store that
// holds one takes the other as the same session, shorter or longer.
func TestDecodeCrashedIsPrefix(t *testing.T) {
	full := readFixture(t, "py/py_branch_a.jsonl")
	ls := lines(full)
	for _, keep := range []int{1, 5, len(ls) - 1} {
		partial := []byte(strings.Join(ls[:keep], "\n") + "\n")
		p, f := decodeBytes(t, partial), decodeBytes(t, full)
		if p.ID() != f.ID() || p.Len() >= f.Len() {
			t.Fatalf("partial %s (%d chunks), full %s (%d chunks)", p.ID(), p.Len(), f.ID(), f.Len())
		}
		for i, c := range p.All() {
			if c.ID != f.Chunk(i).ID {
				t.Fatalf("keeping %d lines: chunk %d differs from the full import's", keep, i)
			}
		}
		// And the partial import exports without a trailer.
		if out := encodeBytes(t, p); bytes.Contains(out, []byte(`"trailer"`)) {
			t.Errorf("keeping %d lines: export has a trailer", keep)
		}
	}
}

// TestEncodeImportedContinued: an imported session that work here carried
// on (same id, more chunks) still writes the original's header, with the
// new system prompt in its extras; its trailer now gives the time of the
// last chunk and the session's usage.
func TestEncodeImportedContinued(t *testing.T) {
	s := decodeBytes(t, readFixture(t, "py/py_loop.jsonl"))
	more := s.Append(
		session.User("and now?"),
		session.System("You are terse.").WithNode("0/agent:a#1"),
		session.Of(&session.ModelCall{Provider: "scripted", Usage: session.Usage{InputTokens: 5, OutputTokens: 1}}),
		session.Assistant("done"),
	)
	recs := records(t, encodeBytes(t, more))
	h := recs[0]
	if h["id"] != "a69ccb68-11ff-4397-91fb-40e5ad78b929" || h["lineage_operator"] != "run_session_loop" {
		t.Errorf("header %v", h)
	}
	ex := h["lineage_extras"].([]any)
	if len(ex) != 1 || !jsonEqual(ex[0], []any{PromptKey, map[string]any{"row": 10, "node": "0/agent:a#1", "content": "You are terse."}}) {
		t.Errorf("extras %v", ex)
	}
	tr := recs[len(recs)-1]
	last, _ := more.Last()
	if tr["closed_at"] != isoTime(last.Time) || tr["final_chunk_count"] != 11.0 ||
		!jsonEqual(tr["cumulative_usage"], map[string]any{"prompt_tokens": 255, "completion_tokens": 37, "total_tokens": 292}) {
		t.Errorf("trailer %v", tr)
	}
}
