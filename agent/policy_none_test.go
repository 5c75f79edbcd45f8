package agent

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// A decider that answers allow by policy.RuleNone (no policy applies, as a
// policy.Dir without a file) is as no decider: nothing is recorded. Its
// other answers are: the built-in rule's approval of a high-risk call is.
func TestNoPolicyAppliesRecordsNothing(t *testing.T) {
	none := (*policy.Policy)(nil)
	var read, launched atomic.Int32
	tools := []tool.Tool{counted("read", &read, tool.WithRisk[struct{}](tool.RiskLow)),
		counted("launch", &launched, tool.WithRisk[struct{}](tool.RiskHigh))}
	m := scripted.New(model.Response{ToolCalls: []session.ToolCall{call("r1", "read", `{}`)}}, model.Response{Text: "done"})
	a, _ := New(Config{Name: "n", Model: m, Tools: tools, Decider: none})
	out, err := a.Forward(context.Background(), session.FromUser("go"))
	if err != nil || read.Load() != 1 {
		t.Fatalf("err %v, read ran %d times", err, read.Load())
	}
	if ds := policyDecisions(out); len(ds) != 0 {
		t.Fatalf("decisions of no policy were recorded: %q", ds)
	}
	m = scripted.New(model.Response{ToolCalls: []session.ToolCall{call("l1", "launch", `{}`)}}, model.Response{Text: "done"})
	a, _ = New(Config{Name: "n", Model: m, Tools: tools, Decider: none})
	out, err = a.Forward(context.Background(), session.FromUser("go"))
	if !errors.Is(err, ErrPaused) || launched.Load() != 0 {
		t.Fatalf("a high-risk call: err %v, ran %d times", err, launched.Load())
	}
	if ds := policyDecisions(out); len(ds) != 1 || !decided(out, "approve", "tool launch (call l1)", policy.RuleBuiltin) {
		t.Fatalf("decisions: %q, want the built-in rule's approval alone", ds)
	}
}
