package main

import (
	"errors"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(cleanM{m}, map[string]func(){"rath": main})
}

// TestScripts runs the scripts of testdata/script on this binary: the
// command line of package cli over the example workflows, with demo.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("RATH_HOME", e.WorkDir+"/.rath")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// rathexit N ARGS...: runs rath and checks its exit code,
			// keeping stdout and stderr for the next checks.
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
