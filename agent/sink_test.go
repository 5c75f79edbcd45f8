package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// Forward hands a run's streamed text to the context's sink, with the
// agent's name, and the text adds up to the answer.
func TestForwardEvents(t *testing.T) {
	m := scripted.New(model.Response{Text: "the answer is forty-two"})
	a, err := agent.New(agent.Config{Name: "oracle", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	names := map[string]bool{}
	ctx := agent.WithEvents(context.Background(), func(name string, ev agent.Event) {
		names[name] = true
		if ev.Kind == agent.TextDelta {
			text.WriteString(ev.Delta)
		}
	})
	out, err := a.Forward(ctx, session.FromUser("what is it?"))
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "the answer is forty-two" || !names["oracle"] || len(names) != 1 {
		t.Fatalf("streamed %q from %v", text.String(), names)
	}
	if out.Chunk(out.Len()-1).Assistant == nil {
		t.Fatal("no answer")
	}
}
