package replay

import (
	"testing"

	"github.com/openrath/rath/session"
)

// A tool re-run by a replay has the same outcome as the record when it
// returned the same: for a result cut to the limit, the same full result,
// whether the record wrote the cut into its content (as records did
// before the cut became a note) or not.
func TestSameOutcomeOfCutResults(t *testing.T) {
	const hash = "sha256:0a"
	old := &session.ToolResult{CallID: "c", Tool: "long", Content: "aaaa\n[truncated: 4 of 9 bytes shown]", FullSize: 9, FullHash: hash}
	now := &session.ToolResult{CallID: "c", Tool: "long", Content: "aaaa", FullSize: 9, FullHash: hash,
		Notes: []session.ToolNote{{Kind: session.ToolNoteTruncated, Text: "4 of 9 bytes shown"}}}
	if !sameOutcome(old, now) || !sameOutcome(now, now) {
		t.Fatal("the same full result is a different outcome")
	}
	other := *now
	other.FullHash = "sha256:0b"
	if sameOutcome(old, &other) {
		t.Fatal("a different full result is the same outcome")
	}
	plain := &session.ToolResult{CallID: "c", Tool: "long", Content: "aaaa"}
	if sameOutcome(plain, now) || sameOutcome(now, plain) {
		t.Fatal("a cut result and an uncut one are the same outcome")
	}
	if !sameOutcome(plain, &session.ToolResult{CallID: "c", Tool: "long", Content: "aaaa"}) ||
		sameOutcome(plain, &session.ToolResult{CallID: "c", Tool: "long", Content: "aaab"}) {
		t.Fatal("uncut results are not compared by content")
	}
}
