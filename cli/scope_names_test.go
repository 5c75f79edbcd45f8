package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// The command line's scope names — a token's, a quota's — refuse "." and
// "..": a usage error, nothing stored.
func TestScopeNamesRefuseDotsCLI(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home)
	for _, name := range []string{".", ".."} {
		for _, args := range [][]string{
			{"token", "create", "--tenant", name, "--grant", "run.read"},
			{"token", "create", "--tenant", "acme", "--project", name, "--grant", "run.read"},
			{"quota", "set", "--tenant", name, "--project", "web", "--queued", "1"},
			{"quota", "set", "--tenant", "acme", "--project", name, "--queued", "1"},
		} {
			code, _, errs := rathIn(t, home, "", args...)
			if code != exitUsage || !strings.Contains(errs, "dots alone") {
				t.Errorf("rath %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
			}
		}
	}
	if out := rathOK(t, home, "token", "ls"); strings.Contains(out, "..") {
		t.Fatalf("a refused token was stored:\n%s", out)
	}
	if out := rathOK(t, home, "quota", "ls"); strings.Contains(out, "..") {
		t.Fatalf("a refused quota was stored:\n%s", out)
	}
}
