package hello_test

import (
	"context"
	"testing"

	"github.com/openrath/rath"
	hello "github.com/openrath/rath/examples/01_hello"
	"github.com/openrath/rath/session"
)

func TestHello(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	out, err := rt.Run(ctx, "hello")
	if err != nil {
		t.Fatal(err)
	}
	want := []session.Kind{session.KindUser, session.KindSystem, session.KindModelCall, session.KindAssistant}
	if out.Len() != len(want) {
		t.Fatalf("%d chunks, want %d: %v", out.Len(), len(want), out.Chunks())
	}
	for i, c := range out.All() {
		if c.Kind != want[i] {
			t.Errorf("chunk %d is %s, want %s", i, c.Kind, want[i])
		}
		if i > 0 && c.Node != "agent:greeter#1" {
			t.Errorf("chunk %d was made by %q, want agent:greeter#1", i, c.Node)
		}
	}
	if got := out.Chunk(0).User.Text; got != hello.Question {
		t.Errorf("user chunk %q", got)
	}
	if got := out.Chunk(1).System.Text; got != hello.Instructions {
		t.Errorf("system chunk %q", got)
	}
	mc := out.Chunk(2).ModelCall
	if mc.Provider != "scripted" || mc.Response.Text != hello.Answer || mc.Usage != hello.Usage ||
		mc.RequestDigest == "" || len(mc.Attempts) != 1 || mc.Attempts[0].Status != 200 || !mc.Stream {
		t.Errorf("model_call evidence: %+v", mc)
	}
	if got := out.Chunk(3).Assistant.Text; got != hello.Answer {
		t.Errorf("answer %q", got)
	}
	if out.Usage() != hello.Usage {
		t.Errorf("usage %v, want %v", out.Usage(), hello.Usage)
	}
	// The model's view leaves the evidence out (the agent puts its
	// instructions first when it builds a request).
	tr := out.Transcript()
	if len(tr) != 3 || tr[0].Role != session.RoleUser || tr[1].Role != session.RoleSystem || tr[2].Role != session.RoleAssistant {
		t.Errorf("transcript: %+v", tr)
	}
	lin := out.Lineage()
	if lin.Op != "agent:greeter#1" || lin.Kind != session.LineageDerive || len(lin.Parents) != 1 {
		t.Errorf("lineage %+v", lin)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}
	info, err := rt.Store.Info(ctx, out.ID())
	if err != nil || info.Head != out.Head() || info.Labels[rath.WorkflowLabel] != "hello" {
		t.Fatalf("stored: %+v, %v", info, err)
	}

	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Errorf("replay head %s, want %s", again.Head(), out.Head())
	}
}
