package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A decision is shown to the run's tenant (its session, its run's error):
// a file that does not load is named in it relative to the directory,
// never by the server's path; Check and Policy, for the operator, name
// the file by its path.
func TestDirDecisionsNameNoServerPath(t *testing.T) {
	cases := map[string]func(path string){
		"broken": func(path string) {
			write(t, path, `{"rules": [{"name": "broken", "when": "action.tool ==", "effect": "allow"}]}`)
		},
		"unknown member": func(path string) { write(t, path, `{"rulez": []}`) },
		"not a file": func(path string) {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"unreadable": func(path string) {
			write(t, path, `{}`)
			if err := os.Chmod(path, 0); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			if name == "unreadable" && os.Geteuid() == 0 {
				t.Skip("root reads any file")
			}
			base := filepath.Join(t.TempDir(), "srv", "policies")
			path := filepath.Join(base, "acme", "web.json")
			mk(path)
			d, err := OpenDir(base + string(filepath.Separator)) // as configured: unclean

			if err != nil {
				t.Fatal(err)
			}
			got := decide(t, d, Action{Kind: KindModel, Tenant: "acme", Project: "web"})
			if got.Effect != Deny || got.Rule != RuleLoad {
				t.Fatalf("%s", got)
			}
			if strings.Contains(got.Reason, base) || strings.Contains(got.Reason, "/srv/") || !strings.Contains(got.Reason, "acme/web.json") {
				t.Fatalf("the reason shown to the tenant: %q", got.Reason)
			}
			if _, err := d.Policy("acme", "web"); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("the operator's error: %v", err)
			}
		})
	}
}
