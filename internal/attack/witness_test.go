package attack

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/audit/audittest"
	"github.com/openrath/rath/store"
	_ "github.com/openrath/rath/store/sqlite" // the suite's store, opened as an attacker with the file would
)

// witness is the audit witness file every rath process of the suite
// appends its lanes' heads to (RATH_AUDIT_WITNESS).
func witness(home string) string { return filepath.Join(filepath.Dir(home), "audit.witness") }

// probeAuditWitness: with write access to the database, an attacker cuts
// the servers' longest audit lane short and rewrites its anchor to match;
// the witness file every process wrote, outside the database, shows it.
func probeAuditWitness(t *testing.T, a *attack) {
	out, errOut, code := a.cli(t, "audit", "verify", "--witness", witness(a.home))
	if code != 0 || !strings.Contains(out, "intact") || strings.Contains(out, "not in it") {
		t.Fatalf("rath audit verify --witness before the cut: exit %d: %s%s", code, out, errOut)
	}
	ctx := context.Background()
	path := filepath.Join(a.home, "rath.db")
	st, err := store.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := st.List(ctx, store.Filter{Labels: map[string]string{audit.LabelLane: "lane"}})
	st.Close()
	if err != nil || len(lanes) < 5 {
		t.Fatalf("audit lanes: %d, %v", len(lanes), err)
	}
	lane := lanes[0]
	for _, l := range lanes {
		if l.Len > lane.Len {
			lane = l
		}
	}
	if lane.Len < 20 {
		t.Fatalf("the longest lane holds %d chunks", lane.Len)
	}
	keep := lane.Len / 2
	audittest.Truncate(t, audittest.SQLite(path), lane.ID, keep)
	st, err = store.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Info(ctx, lane.ID)
	if err != nil {
		t.Fatal(err)
	}
	anchor := fmt.Sprintf("%d %s %s", keep-1, info.Head, info.Labels[audit.LabelStarted])
	if err := st.SetLabel(ctx, lane.ID, audit.LabelAnchor, anchor); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, errOut, code = a.cli(t, "audit", "verify", "--witness", witness(a.home))
	if code != 1 || !strings.Contains(out, "lane "+string(lane.ID)) || !strings.Contains(out, "the witness saw") {
		t.Errorf("rath audit verify --witness after lane %s was cut to %d of %d chunks: exit %d: %s%s", lane.ID, keep, lane.Len, code, out, errOut)
	}
}
