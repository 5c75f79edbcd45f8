package agent

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

func TestApprovalPausesAndResumes(t *testing.T) {
	for _, approve := range []bool{true, false} {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db")})
		if err != nil {
			t.Fatal(err)
		}
		ran := 0
		deploy := tool.MustFunc("deploy", "Deploys.", func(context.Context, struct{}) (string, error) { ran++; return "deployed", nil })
		m := scripted.New(
			model.Response{ToolCalls: []session.ToolCall{call("d1", "deploy", `{}`)}},
			model.Response{Text: "finished"})
		a, _ := New(Config{Name: "ops", Model: m, Tools: []tool.Tool{deploy}, Store: st, NeedApproval: []string{"deploy"}})
		out, err := a.Forward(ctx, session.FromUser("ship it"))
		if !errors.Is(err, ErrPaused) || ran != 0 {
			t.Fatalf("err = %v, ran %d", err, ran)
		}
		info, err := st.Info(ctx, out.ID())
		if err != nil || info.Status != store.StatusPaused || info.Head != out.Head() {
			t.Fatalf("stored %+v, %v", info, err)
		}
		loaded, err := st.Load(ctx, out.ID())
		if err != nil {
			t.Fatal(err)
		}
		final, err := a.Resume(ctx, loaded, Verdict{Approve: approve, By: "alice", Reason: "looks right"})
		if err != nil {
			t.Fatal(err)
		}
		var verdicts []string
		var result *session.ToolResult
		for _, c := range final.All() {
			if c.Approval != nil {
				verdicts = append(verdicts, c.Approval.Verdict)
			}
			if c.ToolResult != nil {
				result = c.ToolResult
			}
		}
		want := "requested,approved,started" // the tool is not idempotent: marked as begun before it runs
		if !approve {
			want = "requested,rejected"
		}
		if strings.Join(verdicts, ",") != want || final.ID() != out.ID() {
			t.Fatalf("verdicts %v", verdicts)
		}
		if approve && (ran != 1 || result.Content != "deployed") {
			t.Fatalf("approved: ran %d, result %+v", ran, result)
		}
		if !approve && (ran != 0 || result.Error == nil || result.Error.Kind != session.ToolErrRejected || !strings.Contains(result.Error.Message, "looks right")) {
			t.Fatalf("rejected: ran %d, result %+v", ran, result)
		}
		if last := final.Chunk(final.Len() - 1); last.Assistant == nil || last.Assistant.Text != "finished" {
			t.Fatalf("the loop did not go on: %+v", last)
		}
		info, _ = st.Info(ctx, out.ID())
		if info.Status != store.StatusActive || info.Head != final.Head() {
			t.Fatalf("after resume: %+v", info)
		}
		if _, err := a.Resume(ctx, final, Verdict{Approve: true}); err == nil {
			t.Fatal("resuming a session with nothing pending succeeded")
		}
		st.Close()
	}
}
