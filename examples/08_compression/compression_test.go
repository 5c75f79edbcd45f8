package compression_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"

	"github.com/openrath/rath/examples/08_compression"
)

func TestCompression(t *testing.T) {
	ctx := context.Background()
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	out, err := rt.Run(ctx, compression.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}

	// One compress chunk, with its range, summary, model and token estimates.
	at, cc := -1, (*session.Compression)(nil)
	for i, c := range out.All() {
		if c.Compress != nil {
			if cc != nil {
				t.Fatal("two compress chunks")
			}
			at, cc = i, c.Compress
			if !strings.HasPrefix(c.Node, "compress/compressor:history#1") {
				t.Fatalf("compress chunk node %q", c.Node)
			}
		}
	}
	if cc == nil {
		t.Fatal("no compress chunk")
	}
	if cc.From != out.Chunk(0).ID || cc.To != out.Chunk(cc.Count-1).ID || cc.Count != 16 {
		t.Fatalf("range: from %s to %s, %d chunks", cc.From.Short(), cc.To.Short(), cc.Count)
	}
	if !strings.Contains(cc.Summary, "payments v4.18.0") || cc.Model != "scripted:scripted" {
		t.Fatalf("summary %q by %q", cc.Summary, cc.Model)
	}
	if cc.TokensBefore <= cc.TokensAfter || cc.TokensAfter <= 0 {
		t.Fatalf("tokens before %d, after %d", cc.TokensBefore, cc.TokensAfter)
	}
	// The summary's model call is recorded right before it.
	if mc := out.Chunk(at - 1).ModelCall; mc == nil || mc.Response.Text != cc.Summary {
		t.Fatalf("the chunk before the compression: %+v", out.Chunk(at-1))
	}

	// The originals stay in the chain and in the store: the question and
	// all five log excerpts, hidden from the view but not deleted.
	stored, err := rt.Store.Load(ctx, out.ID())
	if err != nil || stored.Head() != out.Head() {
		t.Fatalf("stored: %v", err)
	}
	var read []string
	for i, c := range stored.All() {
		if c.ToolResult != nil {
			read = append(read, string(c.ToolResult.Args))
			if i < cc.Count && !strings.Contains(c.ToolResult.Content, "09:") {
				t.Fatalf("log excerpt %d: %q", i, c.ToolResult.Content)
			}
		}
	}
	if len(read) != 5 || !strings.Contains(read[0], "gateway") || !strings.Contains(read[4], "inventory") {
		t.Fatalf("tool results in the chain: %v", read)
	}
	if u := stored.Chunk(0).User; u == nil || !strings.Contains(u.Text, "Find the root cause") {
		t.Fatalf("the question is gone from the chain: %+v", stored.Chunk(0))
	}

	// The view: the summary in place of the range, the hidden log lines
	// gone, the durable note (inside the range) still there.
	view := out.Transcript()
	text := ""
	for _, m := range view {
		text += string(m.Role) + ": " + m.Content + "\n"
	}
	noteAt := -1
	for i, c := range out.All() {
		if c.Note != nil && strings.HasPrefix(c.Note.Text, "Standing rule") {
			noteAt = i
		}
	}
	if noteAt < 0 || noteAt >= cc.Count {
		t.Fatalf("the note is at %d, not inside the compressed range of %d", noteAt, cc.Count)
	}
	for _, want := range []string{fmt.Sprintf("Summary of %d earlier chunks", cc.Count), "Standing rule from the incident commander", "You are the on-call engineer"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the view lacks %q:\n%s", want, text)
		}
	}
	for _, gone := range []string{"upstream prematurely closed connection", "Checkout returned 502s from about"} {
		if strings.Contains(text, gone) {
			t.Fatalf("the view still shows %q", gone)
		}
	}

	// The postmortem was written from that view and follows the rule.
	last, _ := out.Last()
	if last.Assistant == nil || !strings.Contains(last.Assistant.Text, "Per the standing rule") || !strings.Contains(last.Assistant.Text, "v4.17.2 at 09:23:50") {
		t.Fatalf("postmortem: %+v", last)
	}

	// Deterministic: the replay serves every call and repeats the head.
	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Fatalf("replay head %s, recorded %s", again.Head(), out.Head())
	}
}
