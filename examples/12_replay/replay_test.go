package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openrath/rath"

	example "github.com/openrath/rath/examples/12_replay"
)

func TestReplay(t *testing.T) {
	ctx := context.Background()
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	out, err := rt.Run(ctx, example.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}

	// The recorded run: the calculation, then the reply.
	var notes []string
	recLen := 0
	for i, c := range out.All() {
		if c.Note != nil {
			notes = append(notes, c.Note.Text)
			if recLen == 0 {
				recLen = i
			}
		}
	}
	if len(notes) != 3 || recLen != 10 {
		t.Fatalf("%d notes after %d chunks", len(notes), recLen)
	}
	rec := out.Chunk(recLen - 1)
	if rec.Node != "invoice/reply/agent:writer#1" || !strings.Contains(rec.Assistant.Text, "2784.60 EUR") {
		t.Fatalf("the recorded reply: %+v", rec)
	}
	head := out.Chunk(recLen - 1).ID

	// 1. The same code replays identically, serving every call.
	want := "replay.Run, same code: identical — 10 chunks, head " + string(head) + " as recorded; 0 model calls and 0 tool runs"
	if !strings.HasPrefix(notes[0], want) {
		t.Fatalf("note 1:\n%s\nwant prefix\n%s", notes[0], want)
	}
	// 2. Changed code diverges at the tool result, with the difference.
	for _, w := range []string{"a *replay.Divergence at invoice/calculate/agent:calculator#1, recorded chunk 4",
		"the replayed tool_result chunk differs from the record",
		`- "content": "{\"vat\":\"444.60\",\"total\":\"2784.60\"}"`, `+ "content": "{\"vat\":\"445.00\",\"total\":\"2785.00\"}"`} {
		if !strings.Contains(notes[1], w) {
			t.Fatalf("note 2 lacks %q:\n%s", w, notes[1])
		}
	}
	if out.Chunk(4).ToolResult == nil {
		t.Fatalf("chunk 4 is a %s", out.Chunk(4).Kind)
	}
	// 3. The fork shares the calculation and answers in German.
	for _, w := range []string{"replay.Fork at chunk 7 (where the writer starts)", "the first 7 chunks are the record's",
		"0 calls to the calculator's model", "then live: Vielen Dank", "444,60 EUR"} {
		if !strings.Contains(notes[2], w) {
			t.Fatalf("note 3 lacks %q:\n%s", w, notes[2])
		}
	}

	// This run is deterministic offline: replaying it repeats the head
	// (the three inner replays included).
	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Fatalf("replay head %s, recorded %s", again.Head(), out.Head())
	}
}
