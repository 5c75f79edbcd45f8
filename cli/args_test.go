package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
)

// greeterWorkflow declares parameters: its agent's answer is made of them.
var greeterWorkflow = rath.Workflow{
	Name:        "greeter",
	Description: "greets someone by name",
	Params: []rath.Param{
		{Name: "name", Description: "who to greet", Required: true},
		{Name: "greeting", Description: "the word to greet with", Default: "hello"},
	},
	Build: func(ctx context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
		text := rath.Arg(ctx, "greeting") + ", " + rath.Arg(ctx, "name")
		m := scripted.Func(func(context.Context, *model.Request) (model.Response, error) {
			return model.Response{Text: text}, nil
		})
		a, err := agent.New(agent.Config{Name: "greeter", Instructions: "Greet with " + text + ".", Model: m, Store: rt.Store})
		return a, session.FromUser("greet"), err
	},
}

// TestRunArgs: --arg gives a workflow the parameters it declares, with the
// defaults of those left out; a replay builds it with the same ones;
// anything it does not declare, or a required one left out, is a usage
// error.
func TestRunArgs(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home) // the runtime sets it; restore it after
	answer := func(args ...string) (string, session.ID) {
		t.Helper()
		var res struct {
			ID     session.ID `json:"id"`
			Answer string     `json:"answer"`
			OK     bool       `json:"ok"`
		}
		if err := json.Unmarshal([]byte(rathOK(t, home, append([]string{"--json", "run", "greeter"}, args...)...)), &res); err != nil || !res.OK {
			t.Fatalf("run greeter %v: %+v, %v", args, res, err)
		}
		return res.Answer, res.ID
	}
	if got, _ := answer("--arg", "name=Ada"); got != "hello, Ada" {
		t.Errorf("with the default greeting: %q", got)
	}
	got, id := answer("--arg", "name=Ada", "--arg", "greeting=hi")
	if got != "hi, Ada" {
		t.Errorf("with both parameters: %q", got)
	}
	if out := rathOK(t, home, "replay", string(id)); !strings.HasPrefix(out, "identical") {
		t.Errorf("replaying a run with parameters: %s", out)
	}

	if list := rathOK(t, home, "run"); !strings.Contains(list, "name [greeting=hello]") || !strings.Contains(list, "PARAMS") {
		t.Errorf("rath run does not list greeter's parameters:\n%s", list)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"greeter"}, `missing parameter "name": greeter requires it: who to greet`},
		{[]string{"greeter", "--arg", "name=Ada", "--arg", "colour=red"}, `unknown parameter "colour": greeter takes name, greeting`},
		{[]string{"greeter", "--arg", "name"}, `--arg "name" is not of the form name=value`},
		{[]string{"greeter", "--arg", "name=A", "--arg", "name=B"}, "--arg name is given twice"},
		{[]string{"adder", "--arg", "a=1"}, `unknown parameter "a": adder takes no parameters`},
	} {
		code, out, errs := rathIn(t, home, "", append([]string{"run"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || out != "" {
			t.Errorf("run %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
	}
}
