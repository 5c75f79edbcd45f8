package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/audit/audittest"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// auditStore writes records 1-5 (record 3 a denial by mallory) to the
// audit log of a SQLite store under a new home, and returns the home, the
// store's path and the lane.
func auditStore(t *testing.T) (home, path string, lane session.ID) {
	t.Helper()
	home = t.TempDir()
	path = filepath.Join(home, "audit.db")
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := audit.Open(ctx, st, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		r := audit.Record{Kind: audit.KindGrant, Principal: fmt.Sprintf("user-%d", i), Action: "runs.submit", Outcome: audit.OutcomeAllowed}
		if i == 3 {
			r.Principal, r.Outcome, r.Reason = "mallory", audit.OutcomeDenied, "no grant"
		}
		if err := l.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return home, path, l.Lane()
}

func runAudit(t *testing.T, home, path string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"--home", home, "--store", "sqlite://" + path}, args...)
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAuditCLI(t *testing.T) {
	home, path, lane := auditStore(t)
	code, out, errs := runAudit(t, home, path, "audit", "verify")
	if code != 0 || strings.TrimSpace(out) != "5 records in 1 lane: intact" {
		t.Fatalf("verify: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runAudit(t, home, path, "audit", "ls", "--principal", "mallory")
	if code != 0 || !strings.Contains(out, "mallory") || !strings.Contains(out, "denied") || strings.Contains(out, "user-1") {
		t.Fatalf("ls --principal: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runAudit(t, home, path, "--json", "audit", "ls", "--since", "1h", "--limit", "2")
	var rs []audit.Record
	if code != 0 || json.Unmarshal([]byte(out), &rs) != nil || len(rs) != 2 || rs[0].Seq != 5 || rs[0].Lane != lane {
		t.Fatalf("ls --json --since 1h --limit 2: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs = runAudit(t, home, path, "audit", "ls", "--since", "yesterday"); code != exitUsage {
		t.Fatalf("a bad --since: exit %d (%s)", code, errs)
	}

	// The denial becomes an approval in the database.
	audittest.Edit(t, audittest.SQLite(path), lane, 3, `\"outcome\":\"denied\"`, `\"outcome\":\"allowed\"`)
	code, out, errs = runAudit(t, home, path, "audit", "verify")
	want := fmt.Sprintf("lane %s record 3: edited", lane)
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(errs, "tampered") {
		t.Fatalf("verify after an edit: exit %d, stdout %q, stderr %q; want exit 1 naming %q", code, out, errs, want)
	}
}

func TestAuditCLIReordered(t *testing.T) {
	home, path, lane := auditStore(t)
	audittest.Swap(t, audittest.SQLite(path), lane, 2, 3)
	code, out, errs := runAudit(t, home, path, "--json", "audit", "verify")
	var rep audit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json: %v: %q", err, out)
	}
	named := false
	for _, p := range rep.Problems {
		named = named || (p.Lane == lane && p.Seq == 2)
	}
	if code != 1 || !named {
		t.Fatalf("verify --json after a swap: exit %d, problems %v, stderr %q", code, rep.Problems, errs)
	}
}
