package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

type addArgs struct{ A, B int }

// adder is the workflow the scripts run: an agent that adds with a tool.
// RATH_TEST_VARIANT=changed changes its instructions, so that replaying a
// recorded run diverges.
func adder(_ context.Context, rt *rath.Runtime) (flow.Module, *session.Session, error) {
	m := scripted.Func(func(_ context.Context, req *model.Request) (model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == session.RoleTool {
			return model.Response{Text: "2 + 3 = " + last.Content, Usage: session.Usage{InputTokens: 20, OutputTokens: 6}}, nil
		}
		return model.Response{ToolCalls: []session.ToolCall{session.NewToolCall("c1", "add", `{"A":2,"B":3}`)}, Usage: session.Usage{InputTokens: 12, OutputTokens: 8}}, nil
	})
	add := tool.MustFunc("add", "Add two numbers.", func(_ context.Context, in addArgs) (string, error) { return strconv.Itoa(in.A + in.B), nil })
	instructions := "You add numbers with the add tool."
	if os.Getenv("RATH_TEST_VARIANT") == "changed" {
		instructions = "You multiply numbers."
	}
	a, err := agent.New(agent.Config{Name: "helper", Instructions: instructions, Model: m, Tools: []tool.Tool{add}, Store: rt.Store})
	if err != nil {
		return nil, nil, err
	}
	return flow.Sequential(a), session.FromUser("what is 2 + 3?"), nil
}

func TestMain(m *testing.M) {
	rath.RegisterWorkflow(rath.Workflow{Name: "adder", Description: "adds two numbers with a tool", Build: adder})
	rath.RegisterWorkflow(greeterWorkflow)
	testscript.Main(m, map[string]func(){
		"rath": func() { os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("RATH_HOME", e.WorkDir+"/.rath")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// capture VAR: sets VAR to the last command's stdout, trimmed.
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: capture VAR")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
			},
			// rathexit N ARGS...: runs rath in-process and checks its exit
			// code, keeping stdout and stderr for the next checks.
			"rathexit": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 1 {
					ts.Fatalf("usage: rathexit CODE ARGS...")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				code := 0
				if err := ts.Exec("rath", args[1:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("rath: %v", err)
					}
					code = ee.ExitCode()
				}
				if code != want {
					ts.Fatalf("exit code %d, want %d", code, want)
				}
			},
		},
	})
}
