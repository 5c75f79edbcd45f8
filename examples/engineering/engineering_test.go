package engineering_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/examples/engineering"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
)

// TestRun runs the example twice on one runtime, offline: the first run
// rejects a patch the real tests reject, forks, and accepts the second;
// the second run recalls the failure and needs one attempt.
func TestRun(t *testing.T) {
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home) // sandbox workspaces go under $RATH_HOME
	ctx := t.Context()
	rt, err := rath.Open(ctx, rath.Config{Home: home, Policies: "../policies"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()

	dir := filepath.Join(t.TempDir(), "dossier")
	res, err := engineering.Run(ctx, rt, dir)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := res.Session
	t.Logf("run 1: %s on %s, %d attempts, dossier %s", out.ID(), res.Backend, res.Attempts, res.Dossier)
	if strings.Contains(os.Getenv("RATH_REQUIRE"), "bwrap") && res.Backend != "bwrap" {
		t.Fatalf("RATH_REQUIRE has bwrap, but the run used %q", res.Backend)
	}
	if res.Backend != "bwrap" && res.Backend != "local" {
		t.Fatalf("backend %q", res.Backend)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Store.Verify(ctx, out.ID()); err != nil {
		t.Fatal(err)
	}

	// Two attempts: the first rejected with the failing test output, the
	// second accepted.
	verdicts := engineering.Verdicts(out)
	if res.Attempts != 2 || len(verdicts) != 2 {
		t.Fatalf("%d attempts, %d verdicts; want 2", res.Attempts, len(verdicts))
	}
	if v := verdicts[0]; v.Verdict != session.VerdictRejected || !strings.Contains(v.Reason, "exit code 1") ||
		!strings.Contains(v.Reason, "--- FAIL: TestCountWhitespace") {
		t.Errorf("first verdict: %s: %q", v.Verdict, v.Reason)
	}
	if v := verdicts[1]; v.Verdict != session.VerdictApproved || !strings.Contains(v.Reason, "exit code 0") {
		t.Errorf("second verdict: %s: %q", v.Verdict, v.Reason)
	}

	// The tests really ran: exit code 1, then 0, each recorded in a
	// tool_result; the accepted patch's diff is in the edit's effects.
	runs := toolResults(out, "run_command")
	if len(runs) != 2 {
		t.Fatalf("%d run_command results, want 2", len(runs))
	}
	for i, want := range []int{1, 0} {
		code, output, ok := engineering.TestRun(runs[i].ToolResult)
		if !ok || code != want {
			t.Errorf("test run %d: exit code %d (recorded: %v), want %d:\n%s", i+1, code, ok, want, runs[i].ToolResult.Content)
		}
		if want == 0 && !strings.Contains(output, "ok  \texample.com/wordcount") {
			t.Errorf("the passing run's output: %q", output)
		}
		if e := runs[i].ToolResult.Effects; len(e) > 0 {
			t.Errorf("test run %d changed the workspace: %+v", i+1, e)
		}
	}
	edits := toolResults(out, "edit_file")
	if len(edits) != 2 {
		t.Fatalf("%d edit_file results, want 2", len(edits))
	}
	accepted := effect(t, edits[1], "wordcount.go")
	if !strings.Contains(accepted.Diff, "+\tfor _, w := range strings.Fields(text) {") ||
		!strings.Contains(accepted.Diff, "-\tfor _, w := range strings.Split(text, \" \") {") {
		t.Errorf("the accepted patch's diff:\n%s", accepted.Diff)
	}
	if rejected := effect(t, edits[0], "wordcount.go"); strings.Contains(rejected.Diff, "strings.Fields") {
		t.Errorf("the rejected patch already splits with Fields:\n%s", rejected.Diff)
	}

	// The failure pattern is remembered with its evidence: the rejected
	// patch and the failing test run, chunks of the session graph.
	var remembered *session.MemoryEvent
	for _, c := range out.All() {
		if m := c.Memory; m != nil && m.Op == session.MemoryRemember {
			remembered = m
		}
	}
	if remembered == nil {
		t.Fatal("no memory write in the run")
	}
	if remembered.EvidenceKind != memory.EvidenceFailure || len(remembered.Evidence) != 2 {
		t.Fatalf("remembered %s with evidence %v (%s)", remembered.URI, remembered.Evidence, remembered.EvidenceKind)
	}
	inGraph := graphChunks(t, rt, out.ID())
	for _, id := range remembered.Evidence {
		c, ok := inGraph[id]
		if !ok {
			t.Fatalf("evidence %s is in no session of the graph", id)
		}
		if c.ToolResult == nil {
			t.Errorf("evidence %s is a %s chunk", id, c.Kind)
		}
	}
	if c := inGraph[remembered.Evidence[1]]; c.ToolResult == nil || c.ToolResult.Tool != "run_command" ||
		!strings.HasPrefix(c.ToolResult.Content, "exit code 1") {
		t.Errorf("the last evidence is not the failing test run: %+v", c.ToolResult)
	}
	mem, err := rt.Memory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	uri := memory.MustParseURI(remembered.URI)
	entry, err := mem.Get(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(entry.Content, "was rejected") || !strings.Contains(entry.Content, "TestCountWhitespace") ||
		!slices.Equal(entry.Provenance.Evidence, remembered.Evidence) {
		t.Errorf("memory entry %s: %q, evidence %v", uri, entry.Content, entry.Provenance.Evidence)
	}

	checkDossier(t, dir, res)

	// The run replays from its record: the same chain, without a model,
	// a sandbox or a memory write.
	again, err := rt.Replay(ctx, out.ID())
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if again.Head() != out.Head() {
		t.Errorf("the replay ends at %s, the record at %s", again.Head(), out.Head())
	}

	// A later run recalls the failure pattern, and its first patch passes.
	res2, err := engineering.Run(ctx, rt, filepath.Join(t.TempDir(), "dossier2"))
	if err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if !recalls(res2.Session, remembered.URI) {
		t.Fatalf("the second run did not recall %s", remembered.URI)
	}
	if res2.Attempts != 1 {
		t.Errorf("the second run took %d attempts, want 1", res2.Attempts)
	}
	x, err := memory.Explain(ctx, rt.Store, res2.Session, remembered.URI)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Recalls) == 0 || len(x.Writes) != 1 || len(x.Writes[0].Evidence) != 2 || len(x.Writes[0].Missing) != 0 {
		t.Errorf("explanation: %d recalls, writes %+v", len(x.Recalls), x.Writes)
	}

	// The other backend: local, when the runs above used bwrap (the build
	// cache they left under the home makes this run quick).
	if res.Backend == "bwrap" {
		t.Setenv("RATH_EXAMPLE_SANDBOX", "local")
		res3, err := engineering.Run(ctx, rt, filepath.Join(t.TempDir(), "dossier3"))
		if err != nil {
			t.Fatalf("Run on local: %v", err)
		}
		runs := toolResults(res3.Session, "run_command")
		if res3.Backend != "local" || res3.Attempts != 1 || len(runs) != 1 {
			t.Fatalf("on %s: %d attempts, %d test runs", res3.Backend, res3.Attempts, len(runs))
		}
		if code, _, ok := engineering.TestRun(runs[0].ToolResult); !ok || code != 0 || len(runs[0].ToolResult.Effects) > 0 {
			t.Errorf("the local test run: %s, effects %+v", runs[0].ToolResult.Content, runs[0].ToolResult.Effects)
		}
	}
}

// checkDossier checks the dossier's files and what dossier.json lists: the
// rejection, the test results and the memory write.
func checkDossier(t *testing.T, dir string, res *engineering.Result) {
	t.Helper()
	if res.Dossier != filepath.Join(dir, export.DossierHTMLFile) {
		t.Errorf("dossier at %s", res.Dossier)
	}
	page, err := os.ReadFile(res.Dossier)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ISSUE.md", "TestCountWhitespace", "strings.Fields"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("index.html does not mention %q", want)
		}
	}
	d, err := export.ReadDossier(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Session.ID != res.Session.ID() || !d.Verify.OK {
		t.Errorf("dossier of %s, verify %+v", d.Session.ID, d.Verify)
	}
	if !strings.Contains(d.Task, "ISSUE.md") {
		t.Errorf("task %q", d.Task)
	}
	var rejections int
	for _, r := range d.Rejected {
		if r.What == export.RejectedApproval && strings.Contains(r.Reason, "TestCountWhitespace") {
			rejections++
		}
	}
	if rejections != 1 {
		t.Errorf("dossier rejections: %+v", d.Rejected)
	}
	var statuses []string
	for _, tr := range d.Tests {
		statuses = append(statuses, tr.Status)
	}
	if !slices.Equal(statuses, []string{export.TestFail, export.TestPass}) {
		t.Errorf("dossier tests: %v", statuses)
	}
	var writes int
	for _, m := range d.Memory {
		if m.Op == session.MemoryRemember {
			writes++
		}
	}
	if writes != 1 || len(d.Environment) == 0 || len(d.Graph.Nodes) < 4 {
		t.Errorf("dossier: %d memory writes, %d placements, %d graph nodes", writes, len(d.Environment), len(d.Graph.Nodes))
	}
	var branches []string
	for _, n := range d.Graph.Nodes {
		if v := n.Labels[engineering.LabelVerdict]; v != "" {
			branches = append(branches, v)
		}
	}
	if !slices.Equal(branches, []string{"rejected", "accepted"}) {
		t.Errorf("branches in the graph: %v", branches)
	}
}

// toolResults returns s's tool_result chunks of tool, in order.
func toolResults(s *session.Session, tool string) []session.Chunk {
	var out []session.Chunk
	for _, c := range s.All() {
		if c.ToolResult != nil && c.ToolResult.Tool == tool {
			out = append(out, c)
		}
	}
	return out
}

// effect returns c's workspace effect on path.
func effect(t *testing.T, c session.Chunk, path string) session.FileEffect {
	t.Helper()
	for _, e := range c.ToolResult.Effects {
		if e.Path == path {
			return e
		}
	}
	t.Fatalf("%s records no effect on %s: %+v", c.ID, path, c.ToolResult.Effects)
	return session.FileEffect{}
}

// graphChunks returns every chunk of every session in the lineage graph
// around id, by chunk id.
func graphChunks(t *testing.T, rt *rath.Runtime, id session.ID) map[session.ChunkID]session.Chunk {
	t.Helper()
	g, err := export.LoadGraph(t.Context(), rt.Store, id)
	if err != nil {
		t.Fatal(err)
	}
	all := map[session.ChunkID]session.Chunk{}
	for _, n := range g.Nodes {
		s, err := rt.Store.Load(t.Context(), n.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.All() {
			all[c.ID] = c
		}
	}
	return all
}

// recalls reports whether s recalled uri.
func recalls(s *session.Session, uri string) bool {
	for _, c := range s.All() {
		if m := c.Memory; m != nil && m.Op == session.MemoryRecall {
			for _, h := range m.Hits {
				if h.URI == uri {
					return true
				}
			}
		}
	}
	return false
}
