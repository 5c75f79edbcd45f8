package client

import (
	"strings"
	"testing"
)

func TestParseEvents(t *testing.T) {
	in := ": hello\n\nevent: chunk\nid: 3\ndata: {\"a\":\ndata: 1}\n\nid: 4\ndata:2\n\nevent: live\n\n: keep-alive\n\nevent: x\nid: 5\x006\n\n"
	var got []Event
	for ev, err := range parseEvents(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	want := []Event{{Name: "chunk", ID: "3", Data: []byte("{\"a\":\n1}")}, {Name: "message", ID: "4", Data: []byte("2")}, {Name: "live", Data: []byte("")}, {Name: "x", Data: []byte("")}}
	if len(got) != len(want) {
		t.Fatalf("got %d events: %+v", len(got), got)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].ID != want[i].ID || string(got[i].Data) != string(want[i].Data) {
			t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// FuzzParseEvents: any input parses without a panic into events whose ids
// hold no NUL; events written in the format come back as written.
func FuzzParseEvents(f *testing.F) {
	f.Add("event: chunk\nid: 1\ndata: {}\n\n", "chunk", "7", "{\"x\":1}")
	f.Add(":\n\n\n", "end", "", "")
	f.Add("data\n\nid\x00: x\n", "a b", "1", "line")
	f.Fuzz(func(t *testing.T, raw, name, id, data string) {
		for ev, err := range parseEvents(strings.NewReader(raw)) {
			if err == nil && strings.ContainsRune(ev.ID, 0) {
				t.Fatalf("an id with NUL from %q", raw)
			}
		}
		if name == "" || strings.ContainsAny(name+id+data, "\r\n\x00") || strings.HasPrefix(name, " ") || strings.HasPrefix(id, " ") || strings.HasPrefix(data, " ") {
			return
		}
		in := "event: " + name + "\nid: " + id + "\ndata: " + data + "\n\n"
		n := 0
		for ev, err := range parseEvents(strings.NewReader(in)) {
			if err != nil || ev.Name != name || ev.ID != id || string(ev.Data) != data {
				t.Fatalf("%q parsed to %+v, %v", in, ev, err)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("%q gave %d events", in, n)
		}
	})
}
