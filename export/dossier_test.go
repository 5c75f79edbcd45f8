package export

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// dossierFixture stores the rich session and a reviewed fork of it.
func dossierFixture(t *testing.T) (store.Store, *session.Session) {
	t.Helper()
	st := openStore(t)
	s := richSession()
	commit(t, st, s, "")
	commit(t, st, s.Fork().Append(session.Note("a fork")), "")
	// A hostile op reaches the graph drawing, the DOT text and the tables.
	commit(t, st, s.Derive(hostile, nil).Append(session.Note("derived")), "")
	if err := st.SetLabel(context.Background(), s.ID(), "ticket", hostile); err != nil {
		t.Fatal(err)
	}
	return st, s
}

func findWorkflow(n *WorkflowNode, path string) *WorkflowNode {
	if n.Path == path {
		return n
	}
	for _, c := range n.Children {
		if f := findWorkflow(c, path); f != nil {
			return f
		}
	}
	return nil
}

func TestBuildDossier(t *testing.T) {
	ctx := context.Background()
	st, s := dossierFixture(t)
	d, err := BuildDossier(ctx, st, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if d.Session.ID != s.ID() || d.Session.Head != s.Head() || d.Session.Len != s.Len() || d.Session.Status != "open" {
		t.Errorf("session = %+v", d.Session)
	}
	if d.Task != "Fix the failing test in calc.py" {
		t.Errorf("task = %q", d.Task)
	}

	if len(d.Environment) != 2 || d.Environment[1].SandboxID != "sbx-1" || d.Environment[1].TreeHash != "sha256:"+hex64('a') ||
		d.Environment[1].Image != "python:3.12" || d.Environment[1].Spec.SecretEnv[0] != "API_KEY" {
		t.Errorf("environment = %+v", d.Environment)
	}

	if d.Workflow.Total != s.Len() {
		t.Errorf("workflow total = %d, want %d", d.Workflow.Total, s.Len())
	}
	wantCoder := 0
	for _, c := range s.All() {
		if c.Node == coder {
			wantCoder++
		}
	}
	if n := findWorkflow(d.Workflow, coder); n == nil || n.Chunks != wantCoder || n.Name != "agent:coder#1" {
		t.Errorf("coder node = %+v, want %d chunks", n, wantCoder)
	}
	if n := findWorkflow(d.Workflow, "0/triage"); n == nil || n.Chunks != 1 || n.Total != 1+wantCoder {
		t.Errorf("triage node = %+v", n)
	}
	if n := findWorkflow(d.Workflow, "0"); n == nil || len(n.Children) != 2 || n.Children[0].Name != "triage" || n.Children[1].Name != "review" {
		t.Errorf("workflow 0 = %+v", n)
	}

	if len(d.Graph.Nodes) != 3 || len(d.Graph.Edges) != 2 || !strings.Contains(d.GraphDOT, string(s.ID())) {
		t.Errorf("graph = %+v", d.Graph)
	}
	if !strings.Contains(d.GraphSVG, "<title>"+string(s.ID())+"</title>") {
		t.Errorf("the graph drawing has no node for %s: %q", s.ID(), d.GraphSVG)
	}

	if len(d.Timeline) != s.Len() {
		t.Fatalf("timeline has %d entries, want %d", len(d.Timeline), s.Len())
	}
	for i, e := range d.Timeline {
		c := s.Chunk(i)
		if e.Index != i || e.ID != c.ID || e.Kind != c.Kind.String() || e.Node != c.Node || e.Tier != c.Tier.String() || e.Summary == "" || strings.Contains(e.Summary, "\n") {
			t.Errorf("timeline[%d] = %+v", i, e)
		}
	}

	if len(d.ToolCalls) != 4 {
		t.Fatalf("tool calls = %+v", d.ToolCalls)
	}
	w := d.ToolCalls[0]
	if w.CallID != "call_1" || w.Tool != "write_file" || !strings.Contains(string(w.Args), hostile) || w.Request == "" ||
		w.SandboxID != "sbx-1" || w.Duration == 0 || len(w.Effects) != 1 || !strings.Contains(w.Effects[0].Diff, "+    return a + b") {
		t.Errorf("write_file call = %+v", w)
	}
	if r := d.ToolCalls[2]; r.Result != "exit code 2\n--- stderr\nno rule\n" || len(r.Notes) != 1 ||
		r.Notes[0] != (session.ToolNote{Kind: session.ToolNoteRedacted, Text: richNote}) {
		t.Errorf("run_code call = %+v, want its note apart from its result", r)
	}
	if len(w.Notes) != 0 {
		t.Errorf("write_file call has notes %+v", w.Notes)
	}
	if r := d.ToolCalls[3]; r.Error == nil || r.Error.Kind != session.ToolErrRejected {
		t.Errorf("rejected call = %+v", r)
	}

	if len(d.Tests) != 2 {
		t.Fatalf("tests = %+v", d.Tests)
	}
	if p := d.Tests[0]; p.Status != TestPass || p.ExitCode == nil || *p.ExitCode != 0 || p.Command != "pytest test_calc.py" {
		t.Errorf("passing test = %+v", p)
	}
	if f := d.Tests[1]; f.Status != TestFail || f.ExitCode == nil || *f.ExitCode != 2 || f.Command != "sh: make test" {
		t.Errorf("failing test = %+v", f)
	}

	if len(d.Decisions) != 1 || d.Decisions[0].Choice != "fix" || len(d.Decisions[0].Candidates) != 2 || d.Decisions[0].Reason != "a simple bug" {
		t.Errorf("decisions = %+v", d.Decisions)
	}
	whats := map[string]string{}
	for _, r := range d.Rejected {
		whats[r.What] = r.Subject
	}
	if len(d.Rejected) != 3 || whats[RejectedBranch] != "escalate" || whats[RejectedApproval] != "run_command rm -rf build" || whats[RejectedToolCall] == "" {
		t.Errorf("rejected = %+v", d.Rejected)
	}
	if len(d.Approvals) != 3 || d.Approvals[1].Verdict != session.VerdictRejected || d.Approvals[1].By != "alice" {
		t.Errorf("approvals = %+v", d.Approvals)
	}
	if len(d.Errors) != 1 || d.Errors[0].Code != session.FailMaxSteps {
		t.Errorf("errors = %+v", d.Errors)
	}

	if len(d.Memory) != 2 {
		t.Fatalf("memory = %+v", d.Memory)
	}
	if m := d.Memory[0]; m.Op != session.MemoryRecall || m.Query != "calc bug" || len(m.Hits) != 1 || m.Hits[0].Writer == "" || len(m.Hits[0].Evidence) != 1 {
		t.Errorf("recall = %+v", m)
	}
	if m := d.Memory[1]; m.Op != session.MemoryRemember || m.URI == "" || m.ContentHash == "" || len(m.Evidence) != 1 {
		t.Errorf("remember = %+v", m)
	}

	u := d.Usage
	if u.Calls != 3 || u.Total != s.Usage() || len(u.ByNode) != 2 || len(u.ByAgent) != 2 {
		t.Fatalf("usage = %+v (session usage %v)", u, s.Usage())
	}
	if c := u.ByNode[0]; c.Node != coder || c.Calls != 2 || c.Usage.InputTokens != 300 || c.Usage.OutputTokens != 50 || c.Models[0] != "m-1" {
		t.Errorf("coder usage = %+v", c)
	}
	if a := u.ByAgent[0]; a.Node != "agent:coder" {
		t.Errorf("by agent = %+v", u.ByAgent)
	}

	if !d.Verify.OK || d.Verify.Session != VerifyOK || d.Verify.Store != VerifyOK {
		t.Errorf("verify = %+v", d.Verify)
	}
}

// brokenStore reports every stored chain as tampered.
type brokenStore struct{ store.Store }

func (brokenStore) Verify(context.Context, session.ID) error {
	return errors.New("chunk 3 was edited")
}

func TestBuildDossierVerifyFailure(t *testing.T) {
	st, s := dossierFixture(t)
	d, err := BuildDossier(context.Background(), brokenStore{st}, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if d.Verify.OK || d.Verify.Session != VerifyOK || d.Verify.Store != "chunk 3 was edited" {
		t.Errorf("verify = %+v", d.Verify)
	}
}

func TestBuildDossierNotFound(t *testing.T) {
	_, err := BuildDossier(context.Background(), openStore(t), session.NewID())
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
}

// externalRef finds URLs the page would load or link to.
var externalRef = regexp.MustCompile(`(?i)(src|href|action|url\()\s*=?\s*["']?\s*(https?:)?//`)

func TestDossierFiles(t *testing.T) {
	ctx := context.Background()
	st, s := dossierFixture(t)
	dir := filepath.Join(t.TempDir(), "out", "dossier")
	path, err := Dossier(ctx, st, s.ID(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "index.html") {
		t.Errorf("path = %s", path)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "dossier.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sections map[string]json.RawMessage
	if err := json.Unmarshal(raw, &sections); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"session", "task", "environment", "workflow", "graph", "graph_dot", "timeline", "tool_calls",
		"tests", "decisions", "rejected", "approvals", "errors", "memory", "usage", "verify"} {
		v := strings.TrimSpace(string(sections[k]))
		if v == "" || v == "null" || v == "[]" || v == "{}" || v == `""` {
			t.Errorf("dossier.json section %q is empty: %s", k, v)
		}
	}
	var d DossierData
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.Session.ID != s.ID() || len(d.Timeline) != s.Len() || len(d.ToolCalls) != 4 || d.Usage.Total != s.Usage() ||
		len(d.ToolCalls[2].Notes) != 1 || d.ToolCalls[2].Notes[0].Text != richNote {
		t.Errorf("dossier.json round trip lost data: %+v", d.Session)
	}

	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if strings.Contains(html, "http://") || strings.Contains(html, "https://") || externalRef.MatchString(html) {
		t.Errorf("index.html refers to external resources: %v", externalRef.FindAllString(html, 5))
	}
	if strings.Contains(html, hostile) || !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the hostile tool argument is not escaped")
	}
	if strings.Count(html, "<script>") != 1 {
		t.Errorf("index.html has %d <script> elements, want only its own", strings.Count(html, "<script>"))
	}
	for _, want := range []string{
		`<span class="add">&#43;    <i class="kw">return</i> a &#43; b</span>`, `<span class="del">-    <i class="kw">return</i> a - b</span>`,
		"Fix the failing test in calc.py", "sbx-1", "agent:coder#1", "escalate", "too broad",
		"memory://project/calc-notes", "reviewer ran out of steps", `<span class="badge ok">verified</span>`,
		`id="timeline"`, string(s.Chunk(s.Len() - 1).ID.Short()),
		`<span class="badge note">redacted</span>`,
		`<li data-kind="redacted"><b>redacted</b>: a secret value was replaced with [redacted] &lt;in the output&gt;</li>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("dossier dir holds %d files, want 2 (no temporaries)", len(entries))
	}
}

// Without Graphviz the page still draws the lineage: an inline SVG with a
// node per session of the family, and the DOT text folded beside it.
func TestDossierWithoutGraphviz(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	st, s := dossierFixture(t)
	path, err := Dossier(context.Background(), st, s.ID(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if !strings.Contains(html, `<div class="graph"><svg`) {
		t.Errorf("index.html has no inline lineage SVG")
	}
	if !strings.Contains(html, `<title>`+string(s.ID())+`</title>`) {
		t.Errorf("the lineage SVG has no node for %s", s.ID())
	}
	if !strings.Contains(html, "digraph lineage {") {
		t.Errorf("index.html lacks the DOT text")
	}
}

func TestInlineSVGRefusesActiveContent(t *testing.T) {
	for _, svg := range []string{
		`<svg><script>alert(1)</script></svg>`,
		`<svg><g onload="x()"></g></svg>`,
		`<svg><a xlink:href="javascript:x()"></a></svg>`,
		`no svg here`,
	} {
		if _, ok := inlineSVG(svg); ok {
			t.Errorf("inlineSVG accepted %q", svg)
		}
	}
	out, ok := inlineSVG(`<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><!-- g --><svg width="8pt" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><text>a &lt; b</text></svg>`)
	if !ok || string(out) != `<svg width="8pt"><text>a &lt; b</text></svg>` {
		t.Errorf("inlineSVG = %q, %v", out, ok)
	}
}
