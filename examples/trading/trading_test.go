package trading_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath"
	"github.com/openrath/rath/examples/trading"
	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func open(t *testing.T) *rath.Runtime {
	t.Helper()
	t.Setenv("RATH_OFFLINE", "1")
	home := t.TempDir()
	t.Setenv("RATH_HOME", home) // sandbox workspaces live under it
	rt, err := rath.Open(context.Background(), rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// results returns the tool results of s, by call id.
func results(s *session.Session) map[string]*session.ToolResult {
	out := map[string]*session.ToolResult{}
	for _, c := range s.All() {
		if c.ToolResult != nil {
			out[c.ToolResult.CallID] = c.ToolResult
		}
	}
	return out
}

func TestTradingEvidence(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	dir := filepath.Join(t.TempDir(), "dossier")
	out, index, err := trading.Run(ctx, rt, dir)
	if err != nil {
		t.Fatal(err)
	}
	rs := results(out)

	// The customer's literal order is refused by the risk check, as an error
	// result of kind policy that changed nothing...
	refused := rs["t3-order"]
	if refused == nil || refused.Tool != "place_order" || refused.Error == nil || refused.Error.Kind != session.ToolErrPolicy ||
		!strings.Contains(refused.Error.Message, "exceeds the $5000.00 cap") || len(refused.Effects) != 0 ||
		!strings.Contains(string(refused.Args), `"quantity":120`) {
		t.Fatalf("refused order: %+v", refused)
	}
	// ...and the agent complies: the largest single order within the cap.
	filled := rs["t4-order"]
	var ch trading.Change
	if filled == nil || filled.Error != nil || json.Unmarshal([]byte(filled.Content), &ch) != nil ||
		ch.Order.Status != trading.StatusFilled || ch.Order.Quantity != 49 || ch.CashBefore != 10000 || ch.CashAfter != 5075.5 ||
		ch.PositionBefore != 0 || ch.PositionAfter != 49 {
		t.Fatalf("compliant order: %+v", filled)
	}
	// State deltas: each change of the ledger is a recorded diff of ledger.json.
	for id, want := range map[string]string{"t2-cancel": `"status": "cancelled"`, "t4-order": `"ACME": 49`} {
		e := rs[id].Effects
		if len(e) != 1 || e[0].Path != trading.LedgerFile || e[0].Op != session.EffectModified ||
			!strings.Contains(e[0].Diff, want) {
			t.Fatalf("%s effects: %+v", id, e)
		}
	}
	if rs["t1-balance"].Effects != nil || rs["t1-quote"].Effects != nil {
		t.Fatal("reads recorded effects")
	}

	// The final ledger, in the workspace, is the expected one.
	lease, _, err := rt.Sandboxes.Acquire(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := lease.ReadFile(ctx, trading.LedgerFile)
	lease.Release()
	if err != nil {
		t.Fatal(err)
	}
	var final trading.Ledger
	if err := json.Unmarshal(data, &final); err != nil {
		t.Fatal(err)
	}
	want := trading.Expected()
	if final.Cash != want.Cash || final.Cash != 5075.5 || final.Positions["ACME"] != 49 || final.Positions["GLOBX"] != 15 ||
		!slices.Equal(final.Orders, want.Orders) || final.Orders[0].Status != trading.StatusCancelled {
		t.Fatalf("final ledger %+v, want %+v", final, want)
	}

	// Both validators approved it, in approval chunks.
	var verdicts []string
	for _, c := range out.All() {
		if c.Approval != nil {
			verdicts = append(verdicts, c.Approval.By+"="+c.Approval.Verdict)
		}
	}
	if !slices.Equal(verdicts, []string{"validator:risk-limits=approved", "validator:task-outcome=approved"}) || !trading.Passed(out) {
		t.Fatalf("verdicts: %v", verdicts)
	}

	// The dossier lays out the same action log.
	d, err := export.ReadDossier(dir)
	if err != nil {
		t.Fatal(err)
	}
	if index != filepath.Join(dir, export.DossierHTMLFile) || len(d.ToolCalls) != 6 || len(d.Approvals) != 2 || !d.Verify.OK {
		t.Fatalf("dossier %s: %d tool calls, %d approvals, verify %+v", index, len(d.ToolCalls), len(d.Approvals), d.Verify)
	}
	if _, err := os.Stat(index); err != nil {
		t.Fatal(err)
	}
}

func TestTradingReliability(t *testing.T) {
	ctx := context.Background()
	rt := open(t)
	p, runs, err := trading.Reliability(ctx, rt, 4, 2)
	if err != nil || p != 1.0 || len(runs) != 4 {
		t.Fatalf("pass^2 = %v over %d runs: %v", p, len(runs), err)
	}
	seen := map[session.ID]bool{}
	sandboxes := map[string]bool{}
	for _, r := range runs {
		if !trading.Passed(r) {
			t.Fatalf("run %s did not pass", r.ID())
		}
		seen[r.ID()] = true
		sandboxes[r.Placement().SandboxID] = true
	}
	if len(seen) != 4 || len(sandboxes) != 4 {
		t.Fatalf("runs are not fresh: %d ids, %d sandboxes", len(seen), len(sandboxes))
	}
	// The measurement is stored, derived from every run, with its note.
	infos, err := rt.Store.List(ctx, store.Filter{Labels: map[string]string{trading.ReliabilityLabel: trading.Name}})
	if err != nil || len(infos) != 1 {
		t.Fatalf("reliability sessions: %v, %v", infos, err)
	}
	rec, err := rt.Store.Load(ctx, infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := rec.Last()
	if last.Note == nil || !strings.HasPrefix(last.Note.Text, "pass^2 = 1.00 for the trading task: 4 of 4 runs passed") ||
		rec.Lineage().Extras["pass_k"] != "1.0000" || !slices.Contains(rec.Lineage().Parents, runs[3].ID()) {
		t.Fatalf("reliability record: %+v, %+v", last, rec.Lineage())
	}
	if _, _, err := trading.Reliability(ctx, rt, 2, 3); err == nil {
		t.Fatal("k > n accepted")
	}
}

func TestPassK(t *testing.T) {
	for _, c := range []struct {
		passes, n, k int
		want         float64
	}{{4, 4, 2, 1}, {3, 4, 2, 0.5}, {1, 4, 2, 0}, {2, 4, 1, 0.5}, {0, 4, 1, 0}} {
		if got := trading.PassK(c.passes, c.n, c.k); got != c.want {
			t.Errorf("PassK(%d, %d, %d) = %v, want %v", c.passes, c.n, c.k, got, c.want)
		}
	}
}
