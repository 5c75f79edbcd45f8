package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// A tool call's connections reach the dossier: its JSON record and the
// HTML table, refused ones as refused, through the store.
func TestDossierEgress(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := session.FromUser("go").Append(
		session.Assistant("", session.NewToolCall("c1", "run_command", `{"shell":"curl x"}`)),
		session.Result(session.ToolResult{CallID: "c1", Tool: "run_command", Content: "exit code 0", Egress: []session.Connection{
			{Time: at, Host: "pypi.org", Port: 443, Allowed: true, Rule: "pkg", Reason: "package index"},
			{Time: at, Host: "evil.example", Port: 80, Rule: "allowed_hosts", Reason: "not <allowed>"},
		}}))
	commit(t, st, s, "")
	d, err := BuildDossier(ctx, st, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.ToolCalls) != 1 || len(d.ToolCalls[0].Egress) != 2 || d.ToolCalls[0].Egress[1].Allowed || d.ToolCalls[0].Egress[1].Host != "evil.example" {
		t.Fatalf("tool calls %+v", d.ToolCalls)
	}
	dir := t.TempDir()
	if _, err := Dossier(ctx, st, s.ID(), dir); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"connections: 2", `<tr data-allowed="false">`, "evil.example", "not &lt;allowed&gt;", `<span class="badge ok">allowed</span>`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the dossier's HTML lacks %q", want)
		}
	}
}
