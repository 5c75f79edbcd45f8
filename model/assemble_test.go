package model

import (
	"errors"
	"testing"

	"github.com/openrath/rath/session"
)

func TestAssemblerInterleavedCalls(t *testing.T) {
	var a Assembler
	a.Text("Hel")
	a.Text("lo")
	a.Reasoning("think")
	steps := []struct {
		index          int
		id, name, args string
	}{
		{0, "c0", "read_file", `{"pa`},
		{1, "c1", "grep", `{"q":`},
		{0, "", "", `th":"a.go"}`},
		{1, "", "", `"x"}`},
	}
	for _, s := range steps {
		ev, err := a.ToolDelta(s.index, s.id, s.name, s.args)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != EventToolCallDelta || ev.Index != s.index || ev.Delta != s.args {
			t.Fatalf("delta event = %+v", ev)
		}
	}
	a.Usage(session.Usage{InputTokens: 10})
	a.Usage(session.Usage{OutputTokens: 5})
	evs, r, err := a.Finish("")
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Hello" || r.Reasoning != "think" || r.FinishReason != "tool_calls" {
		t.Fatalf("response = %+v", r)
	}
	if r.Usage.InputTokens != 10 || r.Usage.OutputTokens != 5 {
		t.Fatalf("usage = %+v", r.Usage)
	}
	if len(r.ToolCalls) != 2 || len(evs) != 2 {
		t.Fatalf("calls = %+v", r.ToolCalls)
	}
	if c := r.ToolCalls[0]; c.ID != "c0" || c.Name != "read_file" || string(c.Args) != `{"path":"a.go"}` {
		t.Fatalf("call 0 = %+v", c)
	}
	if c := r.ToolCalls[1]; c.ID != "c1" || c.Name != "grep" || string(c.Args) != `{"q":"x"}` {
		t.Fatalf("call 1 = %+v", c)
	}
	if evs[1].Kind != EventToolCall || evs[1].Call.Name != "grep" {
		t.Fatalf("events = %+v", evs)
	}
}

func TestAssemblerIndexlessDeltas(t *testing.T) {
	var a Assembler
	for _, d := range []struct{ id, name, args string }{
		{"a", "one", `{"x"`},
		{"", "", `:1}`},
		{"b", "two", ``},
		{"b", "", `{}`},
	} {
		if _, err := a.ToolDelta(NoIndex, d.id, d.name, d.args); err != nil {
			t.Fatal(err)
		}
	}
	_, r, err := a.Finish("tool_calls")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 2 || string(r.ToolCalls[0].Args) != `{"x":1}` || r.ToolCalls[1].Name != "two" || string(r.ToolCalls[1].Args) != `{}` {
		t.Fatalf("calls = %+v", r.ToolCalls)
	}
}

func TestAssemblerMalformed(t *testing.T) {
	var a Assembler
	if _, err := a.ToolDelta(0, "a", "f", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ToolDelta(0, "b", "", ""); !errors.Is(err, ErrMalformed) {
		t.Fatalf("changed id: err = %v", err)
	}
	var b Assembler
	if _, err := b.ToolDelta(3, "", "", `{}`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Finish(""); !errors.Is(err, ErrMalformed) {
		t.Fatalf("nameless call: err = %v", err)
	}
}

func TestAssemblerNamePiecesAndBadArgs(t *testing.T) {
	var a Assembler
	a.ToolDelta(0, "", "read_", `{"a":`)
	a.ToolDelta(0, "", "file", ``)
	a.ToolDelta(0, "", "", `oops`)
	_, r, err := a.Finish("")
	if err != nil {
		t.Fatal(err)
	}
	c := r.ToolCalls[0]
	if c.Name != "read_file" || c.ID != "call_0" || c.ArgsValid() || c.ArgsText != `{"a":oops` {
		t.Fatalf("call = %+v", c)
	}
}

func TestAssemblerRepeatedWholeName(t *testing.T) {
	var a Assembler
	a.ToolDelta(0, "x", "grep", `{`)
	a.ToolDelta(0, "x", "grep", `}`)
	_, r, _ := a.Finish("")
	if r.ToolCalls[0].Name != "grep" || string(r.ToolCalls[0].Args) != "{}" {
		t.Fatalf("call = %+v", r.ToolCalls[0])
	}
}

func TestAssemblerReasoningBlocks(t *testing.T) {
	var a Assembler
	a.Reasoning("abc")
	a.ReasoningBlock(session.Reasoning{Text: "abc", Signature: "sig"}, true)
	a.ReasoningBlock(session.Reasoning{Redacted: "opaque"}, false)
	_, r, _ := a.Finish("stop")
	if r.Reasoning != "abc" || len(r.ReasoningBlocks) != 2 || r.ReasoningBlocks[0].Signature != "sig" {
		t.Fatalf("response = %+v", r)
	}
}

// FuzzAssembler drives the assembler with arbitrary delta sequences: it
// must never panic, and a finished response has named calls whose argument
// text is exactly what was streamed for them.
func FuzzAssembler(f *testing.F) {
	f.Add([]byte{0, 1, 'a', 2, 0xff, 'x', 3})
	f.Add([]byte("\x02\x00id\x01fn{\"a\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a Assembler
		args := map[int]string{}
		var text string
		for len(data) >= 2 {
			op, arg := data[0]%4, data[1]
			data = data[2:]
			n := min(int(arg%8), len(data))
			piece := string(data[:n])
			data = data[n:]
			switch op {
			case 0:
				a.Text(piece)
				text += piece
			case 1:
				a.Reasoning(piece)
			case 2, 3:
				idx := int(arg%3) - 1
				id, name := "", ""
				if arg&0x40 != 0 {
					id = "id" + string(rune('a'+arg%3))
				}
				if arg&0x80 != 0 {
					name = "f"
				}
				ev, err := a.ToolDelta(idx, id, name, piece)
				if err != nil {
					if !errors.Is(err, ErrMalformed) {
						t.Fatalf("unexpected error kind: %v", err)
					}
					return
				}
				args[ev.Index] += piece
			}
		}
		_, r, err := a.Finish("")
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
			return
		}
		if r.Text != text {
			t.Fatalf("text %q, streamed %q", r.Text, text)
		}
		for i, c := range r.ToolCalls {
			if c.Name == "" || c.ID == "" {
				t.Fatalf("call %d = %+v", i, c)
			}
		}
		if len(r.ToolCalls) != len(args) {
			t.Fatalf("%d calls, %d streamed", len(r.ToolCalls), len(args))
		}
	})
}
