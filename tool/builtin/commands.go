package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// RunCommandArgs are run_command's arguments.
type RunCommandArgs struct {
	Args    []string `json:"args,omitempty" jsonschema:"the program and its arguments (give args or shell)"`
	Shell   string   `json:"shell,omitempty" jsonschema:"a shell script run with sh -c (give args or shell)"`
	Dir     string   `json:"dir,omitempty" jsonschema:"working directory relative to the workspace"`
	Timeout float64  `json:"timeout_s,omitempty" jsonschema:"seconds before the command is killed"`
	Stdin   string   `json:"stdin,omitempty" jsonschema:"text given on standard input"`
}

// RunCommand runs a command in the sandbox.
func RunCommand() tool.Tool {
	return must(tool.FuncWith("run_command", "Run a command in the workspace (args, or a shell script) and return its exit code and output.",
		func(ctx context.Context, env tool.Env, a RunCommandArgs) (string, error) {
			c := sandbox.Command{Args: a.Args, Shell: a.Shell, Dir: a.Dir, Timeout: time.Duration(a.Timeout * float64(time.Second))}
			if a.Stdin != "" {
				c.Stdin = []byte(a.Stdin)
			}
			if (len(a.Args) == 0) == (a.Shell == "") {
				return "", tool.Errorf(session.ToolErrInvalidArgs, nil, "give exactly one of args and shell")
			}
			return run(ctx, env, c)
		},
		tool.WithResources(func(RunCommandArgs) []tool.Resource { return []tool.Resource{tool.SandboxExclusive()} }),
		tool.WithRisk[RunCommandArgs](tool.RiskHigh)))
}

// RunCodeArgs are run_code's arguments.
type RunCodeArgs struct {
	Language string  `json:"language" jsonschema:"python, sh, bash or node"`
	Code     string  `json:"code" jsonschema:"the program text"`
	Timeout  float64 `json:"timeout_s,omitempty" jsonschema:"seconds before the program is killed"`
}

var interpreters = map[string][]string{
	"python": {"python3", "-"}, "sh": {"sh", "-s"}, "bash": {"bash", "-s"}, "node": {"node", "-"},
}

// RunCode runs a program given as text (through its interpreter's stdin).
func RunCode() tool.Tool {
	return must(tool.FuncWith("run_code", "Run a short program (python, sh, bash or node) in the workspace and return its exit code and output.",
		func(ctx context.Context, env tool.Env, a RunCodeArgs) (string, error) {
			argv, ok := interpreters[strings.ToLower(a.Language)]
			if !ok {
				return "", tool.Errorf(session.ToolErrInvalidArgs, nil, fmt.Sprintf("unknown language %q (python, sh, bash, node)", a.Language))
			}
			return run(ctx, env, sandbox.Command{Args: argv, Stdin: []byte(a.Code), Timeout: time.Duration(a.Timeout * float64(time.Second))})
		},
		tool.WithResources(func(RunCodeArgs) []tool.Resource { return []tool.Resource{tool.SandboxExclusive()} }),
		tool.WithRisk[RunCodeArgs](tool.RiskHigh)))
}

func run(ctx context.Context, env tool.Env, c sandbox.Command) (string, error) {
	s, err := sb(env)
	if err != nil {
		return "", err
	}
	r, err := s.Exec(ctx, c)
	out := formatResult(r)
	if r.Dropped > 0 {
		// A remark about the output, not output: a note of its own (at the
		// end of the text, a cut to the result limit would drop it).
		env.Note(session.ToolNoteTruncated, cutNote(r))
	}
	if err != nil {
		if errors.Is(err, sandbox.ErrTimeout) {
			return "", tool.Errorf(session.ToolErrTimeout, err, "timed out; output so far:\n"+out)
		}
		return "", err
	}
	return out, nil
}

func formatResult(r sandbox.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code %d\n", r.ExitCode)
	if len(r.Stdout) > 0 {
		fmt.Fprintf(&b, "--- stdout\n%s", r.Stdout)
		if r.Stdout[len(r.Stdout)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	if len(r.Stderr) > 0 {
		fmt.Fprintf(&b, "--- stderr\n%s", r.Stderr)
	}
	return b.String()
}

// cutNote is the text of the note on a result whose output the sandbox
// cut (r.Dropped > 0).
func cutNote(r sandbox.Result) string {
	return fmt.Sprintf("the command's output was cut: %d bytes past the first %d MiB of a stream were not kept", r.Dropped, sandbox.MaxOutput>>20)
}

// Default is the usual set: the file tools, search, and commands.
func Default() []tool.Tool {
	return []tool.Tool{ReadFile(), WriteFile(), EditFile(), ListFiles(), Glob(), Grep(), RunCommand(), RunCode()}
}
