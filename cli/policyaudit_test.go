package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/audit"
)

// Without a policy file nothing is decided, so nothing is audited as a
// policy decision; a policy written later is, and a file that does not
// load is said on stderr, naming it.
func TestPolicyAuditOnlyWhatAPolicyDecided(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home)
	t.Setenv("RATH_POLICIES", "")
	policyRecords := func() []audit.Record {
		t.Helper()
		var rs []audit.Record
		if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "audit", "ls", "--kind", "policy")), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	rathOK(t, home, "run", "adder")
	if rs := policyRecords(); len(rs) != 0 {
		t.Fatalf("no policy applies, yet %d policy records, the first %+v", len(rs), rs[0])
	}

	path := filepath.Join(home, "policies", "default", "default.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"rules": [{"name": "adds", "when": "action.tool == 'add'", "effect": "allow"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rathOK(t, home, "run", "adder")
	rs := policyRecords()
	found := false
	for _, r := range rs {
		found = found || strings.Contains(r.Reason, "rule adds")
	}
	if !found {
		t.Fatalf("the policy's decisions are not audited: %+v", rs)
	}

	if err := os.WriteFile(path, []byte(`{"rules": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := rathIn(t, home, "", "run", "adder")
	if code == 0 || !strings.Contains(errs, "does not load") || !strings.Contains(errs, path) {
		t.Fatalf("a broken policy file: exit %d, stderr %q", code, errs)
	}
}
