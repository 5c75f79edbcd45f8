package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// rath show tells the connections a call's command opened: counts in the
// chunk's summary, each decision in full after the table.
func TestShowEgress(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := session.FromUser("go").Append(
		session.Assistant("", session.NewToolCall("c1", "run_command", `{}`)),
		session.Result(session.ToolResult{CallID: "c1", Tool: "run_command", Content: "exit code 0", Egress: []session.Connection{
			{Time: at, Host: "pypi.org", Port: 443, Allowed: true, Rule: "pkg", Reason: "package index"},
			{Time: at, Host: "evil.example", Port: 80, Rule: "allowed_hosts", Reason: "allowed hosts pypi.org: not evil.example"},
		}}))
	if got := summary(s.Chunk(2)); got != "run_command [egress 1 allowed, 1 refused] → exit code 0" {
		t.Errorf("summary = %q", got)
	}
	var b strings.Builder
	if err := writeEgress(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "\negress\n#  CONNECTION       DECISION  RULE           REASON\n" +
		"2  pypi.org:443     allowed   pkg            package index\n" +
		"2  evil.example:80  refused   allowed_hosts  allowed hosts pypi.org: not evil.example\n"
	if b.String() != want {
		t.Errorf("egress section:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := writeEgress(&b, session.FromUser("go")); err != nil || b.Len() != 0 {
		t.Errorf("a session without connections printed %q, %v", b.String(), err)
	}
}
