package customtool_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	customtool "github.com/openrath/rath/examples/05_custom_tool"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

func TestCustomTool(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	out, err := rt.Run(ctx, "custom-tool")
	if err != nil {
		t.Fatal(err)
	}
	var results []*session.ToolResult
	var calls int
	for _, c := range out.All() {
		if c.ToolResult != nil {
			results = append(results, c.ToolResult)
		}
		if c.ModelCall != nil {
			calls++
			if !slices.Equal(c.ModelCall.Params.Tools, []string{"compound_interest"}) {
				t.Errorf("tools offered: %v", c.ModelCall.Params.Tools)
			}
		}
	}
	if len(results) != 2 || calls != 3 {
		t.Fatalf("%d tool results (want 2), %d model calls (want 3)", len(results), calls)
	}
	// The first call never reached the function: its arguments broke the
	// schema.
	bad := results[0]
	if bad.Error == nil || bad.Error.Kind != session.ToolErrInvalidArgs || !strings.Contains(bad.Error.Message, "schema") ||
		bad.Content != "" || !strings.Contains(string(bad.Args), `"principal":"$10,000"`) {
		t.Errorf("first call: %+v (error %+v)", bad, bad.Error)
	}
	good := results[1]
	var r customtool.InterestResult
	if good.Error != nil || json.Unmarshal([]byte(good.Content), &r) != nil {
		t.Fatalf("second call: %+v", good)
	}
	if r != (customtool.InterestResult{FinalAmount: 15669.93, Interest: 5669.93}) {
		t.Errorf("result %+v", r)
	}
	last, _ := out.Last()
	if last.Assistant == nil || !strings.Contains(last.Assistant.Text, "$15,669.93") || !strings.Contains(last.Assistant.Text, "$5,669.93") {
		t.Errorf("answer %+v", last)
	}

	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatal(err)
	}
	if again.Head() != out.Head() {
		t.Errorf("replay head %s, want %s", again.Head(), out.Head())
	}
}

// TestCalculatorSchemaAndChecks: the schema inferred from InterestArgs, and
// the checks the function adds to it.
func TestCalculatorSchemaAndChecks(t *testing.T) {
	calc := customtool.Calculator()
	var schema struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Additional json.RawMessage            `json:"additionalProperties"`
	}
	if err := json.Unmarshal(calc.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	slices.Sort(schema.Required)
	if schema.Type != "object" || !slices.Equal(schema.Required, []string{"principal", "rate_percent", "years"}) ||
		len(schema.Properties) != 4 || string(schema.Additional) != "false" {
		t.Errorf("schema %s", calc.Schema())
	}
	ctx := context.Background()
	for args, want := range map[string]string{
		`{"principal":10000,"rate_percent":4.5,"years":0}`:   "years must be between 1 and 200",
		`{"principal":-5,"rate_percent":4.5,"years":10}`:     "principal must be positive",
		`{"principal":10000,"rate_percent":"4.5","years":1}`: "schema",
		`{"principal":10000,"years":1}`:                      "schema",
	} {
		_, err := calc.Call(ctx, tool.Env{}, json.RawMessage(args))
		if tool.KindOf(err) != session.ToolErrInvalidArgs || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want invalid_arguments saying %q", args, err, want)
		}
	}
	res, err := calc.Call(ctx, tool.Env{}, json.RawMessage(`{"principal":1000,"rate_percent":10,"years":2}`))
	if err != nil || res != `{"final_amount":1210,"interest":210}` {
		t.Errorf("yearly compounding: %s, %v", res, err)
	}
}
