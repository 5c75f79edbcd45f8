package report_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/examples/report"
	"github.com/openrath/rath/examples/research"
	"github.com/openrath/rath/examples/trading"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
)

func open(t *testing.T) *rath.Runtime {
	t.Helper()
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home) // sandbox workspaces live under it
	rt, err := rath.Open(context.Background(), rath.Config{Home: home, Policies: "../policies"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// traced checks that every section of the report cites a read call that
// this session made on src, and that the section's facts are in that
// call's result. It returns the sections by title.
func traced(t *testing.T, out *session.Session, src session.ID) map[string]report.Section {
	t.Helper()
	text, ok := report.ReportText(out)
	if !ok || !strings.HasPrefix(text, "# Technical report: run "+string(src)+"\n") {
		t.Fatalf("report:\n%s", text)
	}
	results := map[string]*session.ToolResult{}
	for _, c := range out.All() {
		if c.ToolResult != nil {
			results[c.ToolResult.CallID] = c.ToolResult
		}
	}
	secs := map[string]report.Section{}
	for _, sec := range report.Sections(text) {
		r := results[sec.CallID]
		if r == nil || r.Tool != sec.Tool || r.Error != nil || !strings.Contains(string(r.Args), string(src)) {
			t.Fatalf("section %q cites %s %s: %+v", sec.Title, sec.Tool, sec.CallID, r)
		}
		for _, fact := range facts(t, sec.Tool, r.Content) {
			if !strings.Contains(sec.Body, fact) {
				t.Fatalf("section %q lacks %q from its source %s", sec.Title, fact, sec.CallID)
			}
		}
		secs[sec.Title] = sec
	}
	if len(secs) != 6 {
		t.Fatalf("sections: %v", secs)
	}
	return secs
}

// facts are what a section must repeat from its tool's result.
func facts(t *testing.T, tool, content string) []string {
	t.Helper()
	var out []string
	decode := func(v any) {
		if err := json.Unmarshal([]byte(content), v); err != nil {
			t.Fatalf("%s result: %v", tool, err)
		}
	}
	switch tool {
	case "run_overview":
		var o report.Overview
		decode(&o)
		out = append(out, string(o.RunID), string(o.Input), o.Workflow, "**"+o.Status+"**", o.Verified)
	case "session_graph":
		var g report.Graph
		decode(&g)
		for _, n := range g.RunSessions {
			out = append(out, string(n.ID), n.Op)
		}
	case "tool_log":
		var l report.ToolLog
		decode(&l)
		for _, c := range l.Calls {
			out = append(out, "| "+c.CallID+" | "+c.Tool+" |")
		}
	case "sandbox_metadata":
		var s report.Sandboxes
		decode(&s)
		for _, p := range s.Placements {
			out = append(out, p.Backend, p.SandboxID)
		}
	case "validation_results":
		var v report.Validation
		decode(&v)
		out = append(out, "Final verdict: **"+v.Final+"**")
		for _, a := range v.Approvals {
			out = append(out, "**"+a.Verdict+"** — "+a.Reason)
		}
		for _, d := range v.Decisions {
			out = append(out, "chose **"+d.Choice+"**", d.Reason)
		}
	case "failure_analysis":
		var f report.Failures
		decode(&f)
		out = append(out, f.Summary)
		for _, c := range f.FailedCalls {
			out = append(out, c.CallID, c.Message)
		}
		for _, r := range f.Rejections {
			out = append(out, r.Reason)
		}
	default:
		t.Fatalf("unknown read tool %s", tool)
	}
	return out
}

func TestReportRunsResearchWhenTheStoreHasNoRun(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	dir := filepath.Join(t.TempDir(), "dossier")
	out, index, err := report.Run(ctx, rt, dir)
	if err != nil {
		t.Fatal(err)
	}
	src, ok := report.Source(out)
	info, err := rt.Store.Info(ctx, src)
	if !ok || err != nil || info.Labels[rath.WorkflowLabel] != research.Name {
		t.Fatalf("source %s: %+v, %v", src, info, err)
	}
	secs := traced(t, out, src)

	// The validation result and the failure of the source run: the baseline
	// attempt rejected, the standardised one approved.
	v := secs["Validation"].Body
	if !strings.Contains(v, "Final verdict: **approved**") || !strings.Contains(v, "**rejected** — attempt 1 (k=3, scale=none): val_accuracy 0.60 < 0.90") ||
		!strings.Contains(v, "chose **scale-features**") {
		t.Fatalf("validation section:\n%s", v)
	}
	f := secs["Failure analysis"].Body
	if !strings.Contains(f, "0 error chunks, 0 failed tool calls, 1 rejected verdict; the run ended closed") ||
		!strings.Contains(f, "Rejected at chunk") || !strings.Contains(f, "recovered") {
		t.Fatalf("failure section:\n%s", f)
	}

	// The report's text is recorded as the file the tool call added, and
	// the validator approved its citations.
	text, _ := report.ReportText(out)
	sum := sha256.Sum256([]byte(text))
	var added, approved bool
	for _, c := range out.All() {
		if r := c.ToolResult; r != nil && r.Tool == "write_file" {
			added = len(r.Effects) == 1 && r.Effects[0].Path == report.ReportPath && r.Effects[0].Op == session.EffectAdded &&
				r.Effects[0].After == "sha256:"+hex.EncodeToString(sum[:])
		}
		if a := c.Approval; a != nil && a.By == "validator:traceable" {
			approved = a.Verdict == session.VerdictApproved && strings.HasPrefix(a.Reason, "6 sections, each citing a successful read of "+string(src))
		}
	}
	if !added || !approved {
		t.Fatalf("report file recorded %v, validator approved %v", added, approved)
	}

	// Its dossier, and a replay that repeats it exactly.
	if index != filepath.Join(dir, export.DossierHTMLFile) {
		t.Fatalf("index %s", index)
	}
	for _, name := range []string{export.DossierHTMLFile, export.DossierJSONFile} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Fatalf("dossier %s: %v", name, err)
		}
	}
	again, err := rt.Replay(ctx, out.ID())
	if err != nil || again.Head() != out.Head() {
		t.Fatalf("replay: %v", err)
	}
}

func TestReportTakesTheLatestRun(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	if _, _, err := research.Run(ctx, rt, filepath.Join(t.TempDir(), "r")); err != nil {
		t.Fatal(err)
	}
	tr, _, err := trading.Run(ctx, rt, filepath.Join(t.TempDir(), "t"))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := report.Run(ctx, rt, filepath.Join(t.TempDir(), "d"))
	if err != nil {
		t.Fatal(err)
	}
	if src, _ := report.Source(out); src != tr.ID() {
		t.Fatalf("reported on %s, not the latest run %s", src, tr.ID())
	}
	secs := traced(t, out, tr.ID())
	// The trading run's failure is the order the risk check refused.
	f := secs["Failure analysis"].Body
	if !strings.Contains(f, "Failed call t3-order (`place_order`") || !strings.Contains(f, "**policy**") ||
		!strings.Contains(f, "exceeds the $5000.00 cap") {
		t.Fatalf("failure section:\n%s", f)
	}
	if v := secs["Validation"].Body; !strings.Contains(v, "validator:risk-limits: **approved**") || !strings.Contains(v, "validator:task-outcome: **approved**") {
		t.Fatalf("validation section:\n%s", v)
	}
}
