package engineering

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/openrath/rath/session"
)

// Validator is the name of the validator that judges each patch.
const Validator = "tests-pass"

// TestsPass is the validator's check: it finds the attempt's last
// `go test` run (a run_command tool_result after the attempt's fork) and
// accepts the patch if and only if that run exited with code 0 and nothing
// was edited after it. The reason quotes the test output.
func TestsPass(_ context.Context, s *session.Session) (bool, string, error) {
	edited := false
	for i := s.Len() - 1; i >= 0; i-- {
		c := s.Chunk(i)
		if c.Placement != nil && c.Placement.ClonedFrom != "" {
			break // the attempt's fork: what is before belongs to the base
		}
		r := c.ToolResult
		if r == nil {
			continue
		}
		switch {
		case r.Tool == "run_command" && isGoTest(r.Args):
			if edited {
				return false, "the workspace was edited after the last `go test ./...` run, so the patch is untested", nil
			}
			return judge(r)
		case (r.Tool == "edit_file" || r.Tool == "write_file") && r.Error == nil:
			edited = true
		}
	}
	return false, "no `go test ./...` run is recorded for this patch", nil
}

// isGoTest reports whether run_command's arguments run go test.
func isGoTest(args json.RawMessage) bool {
	var a struct {
		Args  []string `json:"args"`
		Shell string   `json:"shell"`
	}
	if json.Unmarshal(args, &a) != nil {
		return false
	}
	line := a.Shell
	if line == "" {
		line = strings.Join(a.Args, " ")
	}
	return strings.HasPrefix(strings.TrimSpace(line), "go test")
}

// judge reads the exit code run_command recorded.
func judge(r *session.ToolResult) (bool, string, error) {
	if r.Error != nil {
		return false, fmt.Sprintf("`go test ./...` did not finish (%s): %s", r.Error.Kind, r.Error.Message), nil
	}
	code, out, ok := TestRun(r)
	switch {
	case !ok:
		return false, "the `go test ./...` result records no exit code", nil
	case code == 0:
		return true, "`go test ./...` passed (exit code 0):\n" + out, nil
	}
	return false, fmt.Sprintf("`go test ./...` failed with exit code %d:\n%s", code, out), nil
}

// TestRun reads a run_command result: its exit code and its output
// (stdout then stderr, without run_command's headers, at most 40 lines).
func TestRun(r *session.ToolResult) (code int, output string, ok bool) {
	head, rest, _ := strings.Cut(r.Content, "\n")
	n, err := strconv.Atoi(strings.TrimPrefix(head, "exit code "))
	if err != nil || !strings.HasPrefix(head, "exit code ") {
		return 0, "", false
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(rest, "\n"), "\n") {
		if l == "--- stdout" || l == "--- stderr" || l == "" {
			continue
		}
		if len(lines) == 40 {
			lines = append(lines, "…")
			break
		}
		lines = append(lines, l)
	}
	return n, strings.Join(lines, "\n"), true
}

// Verdicts returns the validator's verdicts recorded in s, in order.
func Verdicts(s *session.Session) []*session.Approval {
	var out []*session.Approval
	for _, c := range s.All() {
		if a := c.Approval; a != nil && a.By == "validator:"+Validator {
			out = append(out, a)
		}
	}
	return out
}
