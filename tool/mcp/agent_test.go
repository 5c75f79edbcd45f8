package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// Through an agent: the server crashes on one call and is restarted before
// the next, whose tool_result holds the server's JSON byte for byte, with
// the restart in its Notes; the model is shown the same content and the
// note apart from it.
func TestAgentRecordsRestartAsNote(t *testing.T) {
	cfg := stdioConfig()
	_, tools := open(t, cfg)
	const doc = `{"items":[1,2,3],"next":null}`
	args, _ := json.Marshal(map[string]string{"text": doc})
	var shown []session.Message
	m := scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role != session.RoleTool:
			return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c1", cfg.Prefix+"crash", `{}`)}}, nil
		case last.ToolCallID == "c1":
			return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c2", cfg.Prefix+"echo", string(args))}}, nil
		}
		shown = append(shown, last)
		return model.Response{Text: "done"}, nil
	})
	a, err := agent.New(agent.Config{Name: "a", Model: m, Tools: []tool.Tool{tools["crash"], tools["echo"]}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Forward(testCtx(t), session.FromUser("go"))
	if err != nil {
		t.Fatal(err)
	}
	var crash, echo *session.ToolResult
	for _, c := range out.All() {
		if r := c.ToolResult; r != nil {
			switch r.CallID {
			case "c1":
				crash = r
			case "c2":
				echo = r
			}
		}
	}
	if crash == nil || crash.Error == nil || crash.Error.Kind != KindServerGone {
		t.Fatalf("the crashing call: %+v", crash)
	}
	if echo == nil || echo.Error != nil || echo.Content != doc || !json.Valid([]byte(echo.Content)) {
		t.Fatalf("the call after the crash: %+v", echo)
	}
	checkNote(t, cfg, echo.Notes)
	if len(shown) != 1 || shown[0].Content != doc || len(shown[0].Notes) != 1 {
		t.Fatalf("the model was shown %+v", shown)
	}
}
