package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/audit/audittest"
	"github.com/openrath/rath/store"
)

// The command line writes the witness file wherever it writes the audit
// log (--audit-witness, or RATH_AUDIT_WITNESS), and `audit verify
// --witness` catches the cut that plain verify cannot: the newest lane's
// records removed with its anchor label rewritten to match.
func TestAuditWitnessCLI(t *testing.T) {
	t.Setenv("RATH_SERVER", "")
	home := t.TempDir()
	path := filepath.Join(home, "audit.db")
	witness := filepath.Join(t.TempDir(), "audit.witness")
	if code, _, errs := runAudit(t, home, path, "token", "create", "--name", "zero", "--grant", "run.read"); code != 0 {
		t.Fatalf("token create: exit %d: %s", code, errs)
	}
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("not a witness\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runAudit(t, home, path, "--audit-witness", notes, "token", "create", "--name", "x", "--grant", "run.read")
	if want := "audit: not an audit witness file: " + notes; code != 1 || !strings.Contains(errs, want) || strings.Contains(errs, "audit: audit:") {
		t.Fatalf("--audit-witness naming another file: exit %d, stderr %q; want exit 1 and %q", code, errs, want)
	}
	if code, _, errs := runAudit(t, home, path, "--audit-witness", witness, "token", "create", "--name", "one", "--grant", "run.read"); code != 0 {
		t.Fatalf("token create --audit-witness: exit %d: %s", code, errs)
	}
	t.Setenv("RATH_AUDIT_WITNESS", witness)
	if code, _, errs := runAudit(t, home, path, "token", "create", "--name", "two", "--grant", "run.read"); code != 0 {
		t.Fatalf("token create with RATH_AUDIT_WITNESS: exit %d: %s", code, errs)
	}
	t.Setenv("RATH_AUDIT_WITNESS", "")
	code, out, errs := runAudit(t, home, path, "audit", "verify", "--witness", witness)
	if code != 0 || strings.TrimSpace(out) != "3 records in 3 lanes: intact; the witness's 2 lines on 2 lanes hold; 1 lane is not in it" {
		t.Fatalf("verify --witness: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	// The newest lane, which no other lane's header witnessed, cut to its
	// header; its anchor rewritten to match.
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := st.List(ctx, store.Filter{Labels: map[string]string{audit.LabelLane: "lane"}})
	if err != nil || len(infos) != 3 {
		t.Fatalf("lanes: %v %v", infos, err)
	}
	newest := slices.MaxFunc(infos, func(a, b store.Info) int { return strings.Compare(string(a.ID), string(b.ID)) })
	st.Close()
	audittest.Truncate(t, audittest.SQLite(path), newest.ID, 1)
	st, err = store.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, newest.ID)
	if err != nil {
		t.Fatal(err)
	}
	anchor := "0 " + string(info.Head) + " " + info.Labels[audit.LabelStarted]
	if err := st.SetLabel(ctx, newest.ID, audit.LabelAnchor, anchor); err != nil {
		t.Fatal(err)
	}
	st.Close()

	if code, out, errs := runAudit(t, home, path, "audit", "verify"); code != 0 {
		t.Fatalf("plain verify after the cut (the gap the witness closes): exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runAudit(t, home, path, "audit", "verify", "--witness", witness)
	want := "tampered: lane " + string(newest.ID) + " record 1: record 1 is missing: the lane was cut short (the witness saw 1 record, line 2)"
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(errs, "tampered") {
		t.Fatalf("verify --witness after the cut: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errs, want)
	}
	code, out, _ = runAudit(t, home, path, "--json", "audit", "verify", "--witness", witness)
	var rep audit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Witness == nil || rep.Witness.Lines != 2 || len(rep.Problems) != 1 {
		t.Fatalf("verify --witness --json: exit %d, %+v (%v): %s", code, rep, err, out)
	}

	// The witness's first line edited.
	data, err := os.ReadFile(witness)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"len":1`, `"len":0`, 1)
	if err := os.WriteFile(witness, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAudit(t, home, path, "audit", "verify", "--witness", witness)
	if code != 1 || !strings.Contains(out, "tampered: witness line 1: edited") {
		t.Fatalf("verify --witness after an edit of the witness: exit %d, stdout %q", code, out)
	}

	if code, _, errs := runAudit(t, home, path, "audit", "verify", "--witness", filepath.Join(home, "nope")); code != 1 || !strings.Contains(errs, "nope") {
		t.Fatalf("verify --witness with no such file: exit %d, stderr %q", code, errs)
	}
}
