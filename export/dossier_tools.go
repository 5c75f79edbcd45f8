package export

import (
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/openrath/rath/session"
)

// toolMatcher pairs tool results with the assistant turns that asked for
// them.
type toolMatcher struct {
	out []ToolCallRecord
	// pending maps a call id to the requests with that id still waiting for
	// a result, oldest first.
	pending map[string][]pendingCall
}

type pendingCall struct {
	at   At
	call session.ToolCall
}

func newToolMatcher() *toolMatcher {
	return &toolMatcher{out: []ToolCallRecord{}, pending: map[string][]pendingCall{}}
}

// request notes the tool calls an assistant chunk asked for.
func (m *toolMatcher) request(at At, calls []session.ToolCall) {
	for _, tc := range calls {
		m.pending[tc.ID] = append(m.pending[tc.ID], pendingCall{at, tc})
	}
}

// result records a tool result, matched to the latest request with its
// call id, and returns the record.
func (m *toolMatcher) result(at At, r *session.ToolResult) ToolCallRecord {
	rec := ToolCallRecord{At: at, CallID: r.CallID, Tool: r.Tool, Args: r.Args, Result: r.Content,
		Error: r.Error, FullSize: r.FullSize, FullHash: r.FullHash, Duration: r.Duration,
		SandboxID: r.SandboxID, Effects: r.Effects, Egress: r.Egress, Notes: r.Notes}
	if ps := m.pending[r.CallID]; len(ps) > 0 {
		p := ps[len(ps)-1]
		if len(ps) == 1 {
			delete(m.pending, r.CallID)
		} else {
			m.pending[r.CallID] = ps[:len(ps)-1]
		}
		rec.Request = p.at.Chunk
		if len(rec.Args) == 0 {
			rec.Args, rec.ArgsText = p.call.Args, p.call.ArgsText
		}
	}
	m.out = append(m.out, rec)
	return rec
}

// records returns every tool call in chunk order, including requested
// calls that never got a result (marked Missing, at their request).
func (m *toolMatcher) records() []ToolCallRecord {
	out := m.out
	var missing []ToolCallRecord
	for _, ps := range m.pending {
		for _, p := range ps {
			missing = append(missing, ToolCallRecord{At: p.at, Request: p.at.Chunk, CallID: p.call.ID,
				Tool: p.call.Name, Args: p.call.Args, ArgsText: p.call.ArgsText, Missing: true})
		}
	}
	if len(missing) == 0 {
		return out
	}
	out = append(out, missing...)
	sortRecords(out)
	return out
}

// exitCode finds the "exit code N" line builtin command tools record.
var exitCode = regexp.MustCompile(`(?m)^exit code (-?\d+)\s*$`)

// testOf returns the test result a tool call records: a run_command or
// run_code call whose arguments mention "test".
func testOf(r ToolCallRecord) (TestResult, bool) {
	if r.Missing || (r.Tool != "run_command" && r.Tool != "run_code") {
		return TestResult{}, false
	}
	args := string(r.Args) + r.ArgsText
	if !strings.Contains(strings.ToLower(args), "test") {
		return TestResult{}, false
	}
	t := TestResult{At: r.At, CallID: r.CallID, Tool: r.Tool, Command: commandOf(r), Output: r.Result, Status: TestUnknown}
	text := r.Result
	if r.Error != nil {
		t.Error = r.Error.Kind + ": " + r.Error.Message
		text += "\n" + r.Error.Message
	}
	if m := exitCode.FindStringSubmatch(text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			t.ExitCode = &n
		}
	}
	switch {
	case r.Error != nil || t.ExitCode != nil && *t.ExitCode != 0:
		t.Status = TestFail
	case t.ExitCode != nil:
		t.Status = TestPass
	}
	return t, true
}

// commandOf renders the command a run_command or run_code call ran.
func commandOf(r ToolCallRecord) string {
	var a struct {
		Args     []string `json:"args"`
		Shell    string   `json:"shell"`
		Language string   `json:"language"`
		Code     string   `json:"code"`
	}
	if len(r.Args) == 0 || json.Unmarshal(r.Args, &a) != nil {
		return r.ArgsText
	}
	switch {
	case a.Shell != "":
		return a.Shell
	case len(a.Args) > 0:
		return strings.Join(a.Args, " ")
	case a.Code != "":
		return a.Language + ": " + a.Code
	}
	return string(r.Args)
}

// sortRecords orders tool call records by chunk index, keeping the order
// of records at the same index.
func sortRecords(rs []ToolCallRecord) {
	slices.SortStableFunc(rs, func(a, b ToolCallRecord) int { return cmp.Compare(a.Index, b.Index) })
}
