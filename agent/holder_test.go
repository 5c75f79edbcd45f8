package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store/sqlite"
	"github.com/openrath/rath/tool"
)

// A call to a tool that is not idempotent starts only if the run's holder
// check passes: refused, the tool does not run, the run stops with the
// check's error, and nothing after the committed turn is recorded (its
// new holder goes on from the record). An idempotent call does not ask.
func TestHolderCheckBeforeAnEffect(t *testing.T) {
	for _, idem := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotent=%v", idem), func(t *testing.T) {
			ctx := context.Background()
			st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db")})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ran := 0
			var opts []tool.Option[struct{}]
			if idem {
				opts = append(opts, tool.Idempotent[struct{}]())
			}
			pay, err := tool.FuncWith("pay", "Pays.", func(context.Context, tool.Env, struct{}) (string, error) { ran++; return "paid", nil }, opts...)
			if err != nil {
				t.Fatal(err)
			}
			m := scripted.New(
				model.Response{ToolCalls: []session.ToolCall{call("p1", "pay", `{}`)}},
				model.Response{Text: "finished"})
			a, _ := New(Config{Name: "ops", Model: m, Tools: []tool.Tool{pay}, Store: st})
			lost := fmt.Errorf("%w: fenced", runctx.ErrNotHolder)
			asked := 0
			cctx := runctx.WithHolderCheck(ctx, func(context.Context) error { asked++; return lost })
			out, err := a.Forward(cctx, session.FromUser("pay it"))
			if idem {
				if err != nil || ran != 1 || asked != 0 {
					t.Fatalf("idempotent: err %v, ran %d, asked %d", err, ran, asked)
				}
				return
			}
			if !errors.Is(err, runctx.ErrNotHolder) || ran != 0 || asked != 1 {
				t.Fatalf("err %v, ran %d, asked %d", err, ran, asked)
			}
			stored, lerr := st.Load(ctx, out.ID())
			if lerr != nil {
				t.Fatal(lerr)
			}
			last := stored.Chunk(stored.Len() - 1)
			if last.Assistant == nil || len(last.Assistant.ToolCalls) != 1 {
				t.Fatalf("stored head is not the calls' turn: %v", last.Kind)
			}
			for _, c := range stored.All() {
				if c.ToolResult != nil || c.Error != nil {
					t.Fatalf("recorded after a refused check: %v", c.Kind)
				}
			}
		})
	}
}
