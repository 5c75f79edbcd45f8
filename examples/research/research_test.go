package research_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/examples/research"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
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

func chunks(s *session.Session, keep func(session.Chunk) bool) []session.Chunk {
	var out []session.Chunk
	for _, c := range s.All() {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// routing keeps the workflow's own decisions (not the policy's on its
// agents' actions).
func routing(c session.Chunk) bool {
	return c.Decision != nil && c.Decision.Selector != agent.PolicySelector
}

func TestResearchEvidence(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	dir := filepath.Join(t.TempDir(), "dossier")
	out, index, err := research.Run(ctx, rt, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Verify(); err != nil {
		t.Fatal(err)
	}

	// Decisions: the baseline first (memory was empty), then standardised
	// features, because the recorded feature spreads differ by ~550x.
	ds := chunks(out, routing)
	if len(ds) != 2 || ds[0].Decision.Choice != research.RouteBaseline || ds[1].Decision.Choice != research.RouteScale ||
		ds[0].Decision.Selector != "next-experiment" || !strings.Contains(ds[1].Decision.Reason, "standardise") ||
		!strings.Contains(ds[1].Decision.Reason, "552x") || len(ds[1].Decision.Candidates) != 4 {
		t.Fatalf("decisions: %+v", ds)
	}

	// The metric is in the tool results, and every attempt left its results
	// file in the workspace, recorded as an effect of its call.
	trs := chunks(out, func(c session.Chunk) bool { return c.ToolResult != nil && c.ToolResult.Tool == "run_command" })
	if len(trs) != 2 || !strings.Contains(trs[0].ToolResult.Content, "val_accuracy=0.6000") ||
		!strings.Contains(trs[1].ToolResult.Content, "val_accuracy=0.9500") {
		t.Fatalf("experiment results: %+v", trs)
	}
	for i, c := range trs {
		want := []string{"results/attempt-1.json", "results/attempt-2.json"}[i]
		if e := c.ToolResult.Effects; len(e) != 1 || e[0].Path != want || e[0].Op != session.EffectAdded || !strings.Contains(e[0].Diff, `"val_accuracy"`) {
			t.Fatalf("attempt %d effects: %+v", i+1, e)
		}
		if c.ToolResult.SandboxID == "" {
			t.Fatalf("attempt %d ran in no recorded sandbox", i+1)
		}
	}
	// The input materials: load_dataset's effects carry the embedded files' hashes.
	loads := chunks(out, func(c session.Chunk) bool { return c.ToolResult != nil && c.ToolResult.Tool == "load_dataset" })
	csv, err := os.ReadFile("data/machines.csv")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(csv)
	if len(loads) != 1 || !slices.ContainsFunc(loads[0].ToolResult.Effects, func(e session.FileEffect) bool {
		return e.Path == "data/machines.csv" && e.After == "sha256:"+hex.EncodeToString(sum[:])
	}) {
		t.Fatalf("load_dataset: %+v", loads)
	}

	// The validator's verdicts: the baseline rejected, the second attempt approved.
	as := chunks(out, func(c session.Chunk) bool { return c.Approval != nil })
	if len(as) != 2 || as[0].Approval.Verdict != session.VerdictRejected || !strings.Contains(as[0].Approval.Reason, "0.60 < 0.90") ||
		as[1].Approval.Verdict != session.VerdictApproved || !strings.Contains(as[1].Approval.Reason, "0.95 >= 0.90") {
		t.Fatalf("verdicts: %+v", as)
	}

	// Memory: a recall (nothing yet), then the best configuration remembered
	// with the measuring tool result and the approval as evidence.
	ms := chunks(out, func(c session.Chunk) bool { return c.Memory != nil })
	if len(ms) != 2 || ms[0].Memory.Op != session.MemoryRecall || len(ms[0].Memory.Hits) != 0 ||
		ms[1].Memory.Op != session.MemoryRemember || ms[1].Memory.URI != research.BestURI ||
		!slices.Equal(ms[1].Memory.Evidence, []session.ChunkID{trs[1].ID, as[1].ID}) ||
		ms[1].Memory.EvidenceKind != memory.EvidenceValidation {
		t.Fatalf("memory: %+v", ms)
	}

	// The run is stored, labelled and closed; the dossier shows the same.
	info, err := rt.Store.Info(ctx, out.ID())
	if err != nil || info.Labels[rath.WorkflowLabel] != research.Name || info.Status != store.StatusClosed {
		t.Fatalf("stored run: %+v, %v", info, err)
	}
	d := readDossier(t, dir, index)
	routes := 0
	for _, r := range d.Decisions {
		if r.Selector != agent.PolicySelector {
			routes++
		}
	}
	if routes != 2 || len(d.Approvals) != 2 || len(d.Memory) != 2 || len(d.ToolCalls) != 3 || !d.Verify.OK {
		t.Fatalf("dossier: %d decisions of the workflow, %d approvals, %d memory, %d tool calls, verify %+v",
			routes, len(d.Approvals), len(d.Memory), len(d.ToolCalls), d.Verify)
	}
}

func TestResearchRecallsWhatItLearnt(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	first, _, err := research.Run(ctx, rt, filepath.Join(t.TempDir(), "d1"))
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := research.Run(ctx, rt, filepath.Join(t.TempDir(), "d2"))
	if err != nil {
		t.Fatal(err)
	}
	recall := chunks(second, func(c session.Chunk) bool { return c.Memory != nil && c.Memory.Op == session.MemoryRecall })
	if len(recall) != 1 || len(recall[0].Memory.Hits) != 1 || recall[0].Memory.Hits[0].URI != research.BestURI {
		t.Fatalf("recall: %+v", recall)
	}
	hit := recall[0].Memory.Hits[0]
	// The memory decided the first experiment, and the decision says so.
	ds := chunks(second, routing)
	if len(ds) != 1 || ds[0].Decision.Choice != research.RouteReuseBest || !strings.Contains(ds[0].Decision.Reason, string(hit.Writer)) {
		t.Fatalf("decisions: %+v", ds)
	}
	// Why was it there? The writer is a step of the first run, and its
	// evidence is the tool result that measured 0.95.
	ex, err := memory.Explain(ctx, rt.Store, second, research.BestURI)
	if err != nil {
		t.Fatal(err)
	}
	w := ex.Writes[0]
	info, err := rt.Store.Info(ctx, w.Writer)
	if err != nil || info.Labels[runctx.Label] != firstRun(t, rt, first) {
		t.Fatalf("writer %s: %+v, %v", w.Writer, info, err)
	}
	if len(w.Evidence) != 2 || w.Evidence[0].ToolResult == nil || !strings.Contains(w.Evidence[0].ToolResult.Content, "val_accuracy=0.9500") {
		t.Fatalf("evidence: %+v", w)
	}
	// The first run replays exactly, though memory has changed since: the
	// memory steps serve their recorded chunks.
	again, err := rt.Replay(ctx, first.ID())
	if err != nil || again.Head() != first.Head() {
		t.Fatalf("replay: %v", err)
	}
}

// firstRun is the run id of a workflow output.
func firstRun(t *testing.T, rt *rath.Runtime, out *session.Session) string {
	t.Helper()
	info, err := rt.Store.Info(context.Background(), out.ID())
	if err != nil {
		t.Fatal(err)
	}
	return info.Labels[runctx.Label]
}

func readDossier(t *testing.T, dir, index string) export.DossierData {
	t.Helper()
	if index != filepath.Join(dir, export.DossierHTMLFile) {
		t.Fatalf("index %s", index)
	}
	if st, err := os.Stat(index); err != nil || st.Size() == 0 {
		t.Fatalf("index.html: %v", err)
	}
	d, err := export.ReadDossier(dir)
	if err != nil {
		t.Fatal(err)
	}
	return *d
}
