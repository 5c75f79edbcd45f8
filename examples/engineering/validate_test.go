package engineering_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openrath/rath/examples/engineering"
	"github.com/openrath/rath/session"
)

// TestTestsPass checks the validator on recorded attempts: it judges the
// attempt's last go test run by the exit code its tool_result recorded.
func TestTestsPass(t *testing.T) {
	goTest := json.RawMessage(`{"args":["go","test","./..."]}`)
	edit := session.Result(session.ToolResult{CallID: "c1", Tool: "edit_file", Args: json.RawMessage(`{"path":"a.go"}`), Content: "edited a.go"})
	run := func(content string) session.Chunk {
		return session.Result(session.ToolResult{CallID: "c2", Tool: "run_command", Args: goTest, Content: content})
	}
	base := session.FromUser("fix it").To("local", session.Spec{}).Append(
		run("exit code 0\n--- stdout\nok  \tx\n"), // before the fork: not this attempt's
		session.Of(&session.Placement{Backend: "local", SandboxID: "sbx_2", ClonedFrom: "sbx_1"}))
	for _, tc := range []struct {
		name   string
		chunks []session.Chunk
		ok     bool
		reason string
	}{
		{"passed", []session.Chunk{edit, run("exit code 0\n--- stdout\nok  \tx\t0.1s\n")}, true, "passed (exit code 0)"},
		{"failed", []session.Chunk{edit, run("exit code 1\n--- stdout\n--- FAIL: TestX (0.00s)\nFAIL\n")}, false, "exit code 1:\n--- FAIL: TestX"},
		{"untested", []session.Chunk{edit}, false, "no `go test ./...` run"},
		{"edited after", []session.Chunk{run("exit code 0\n"), edit}, false, "edited after"},
		{"timed out", []session.Chunk{edit, session.Result(session.ToolResult{CallID: "c3", Tool: "run_command", Args: goTest,
			Error: &session.ToolError{Kind: session.ToolErrTimeout, Message: "timed out"}})}, false, "did not finish (timeout)"},
		{"other command", []session.Chunk{edit, session.Result(session.ToolResult{CallID: "c4", Tool: "run_command",
			Args: json.RawMessage(`{"args":["ls"]}`), Content: "exit code 0\n"})}, false, "no `go test ./...` run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, err := engineering.TestsPass(t.Context(), base.Append(tc.chunks...))
			if err != nil || ok != tc.ok || !strings.Contains(reason, tc.reason) {
				t.Errorf("TestsPass = %v, %q, %v; want %v and a reason with %q", ok, reason, err, tc.ok, tc.reason)
			}
		})
	}
}
