package agent

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// A tool's notes (Env.Note) are recorded beside its content, which stays
// exactly what the tool returned, and a result without notes has none.
func TestToolNotesRecordedApartFromContent(t *testing.T) {
	const doc = `{"ok":true}`
	noted, err := tool.FuncEnv("noted", "Notes something.", func(_ context.Context, env tool.Env, _ struct{}) (string, error) {
		env.Note(session.ToolNoteReconnected, "a new session before this call")
		env.Note("cache_miss", "fetched afresh")
		return doc, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(model.Response{ToolCalls: []session.ToolCall{call("n", "noted", ``), call("p", "noop", ``)}}, model.Response{Text: "ok"})
	a, _ := New(Config{Name: "t", Model: m, Tools: []tool.Tool{noted, noopTool()}})
	out, err := a.Forward(context.Background(), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	res := resultsOf(out)
	want := []session.ToolNote{{Kind: session.ToolNoteReconnected, Text: "a new session before this call"}, {Kind: "cache_miss", Text: "fetched afresh"}}
	if r := res["n"]; r.Content != doc || !json.Valid([]byte(r.Content)) || !reflect.DeepEqual(r.Notes, want) {
		t.Fatalf("noted: %+v", r)
	}
	if r := res["p"]; r.Notes != nil {
		t.Fatalf("a call without notes has %+v", r.Notes)
	}
}
