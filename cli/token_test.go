package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/auth"
)

// TestTokenCommands: create prints the secret once; ls never shows it;
// revoke marks the token revoked; bad grants are usage errors.
func TestTokenCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home)
	t.Setenv("RATH_SERVER", "")

	if code, _, errs := rathIn(t, home, "", "token", "create", "--grant", "*"); code != exitUsage || !strings.Contains(errs, "admin") {
		t.Fatalf("* without --admin: exit %d, %s", code, errs)
	}
	if code, _, errs := rathIn(t, home, "", "token", "create", "--grant", "run.delete"); code != exitUsage || !strings.Contains(errs, "run.delete") {
		t.Fatalf("unknown grant: exit %d, %s", code, errs)
	}

	out := rathOK(t, home, "token", "create", "--name", "ci", "--tenant", "acme", "--project", "web",
		"--grant", "run.create", "--grant", "run.read", "--expires", "720h")
	secret := strings.TrimSpace(out)
	if !strings.HasPrefix(secret, auth.TokenPrefix) || strings.Contains(secret, "\n") {
		t.Fatalf("create printed %q", out)
	}

	var created struct {
		auth.Info
		Secret string `json:"secret"`
	}
	out = rathOK(t, home, "--json", "token", "create", "--admin")
	if err := json.Unmarshal([]byte(out), &created); err != nil || !strings.HasPrefix(created.Secret, auth.TokenPrefix) ||
		created.ID == "" || !created.Admin || created.Grants[0] != "*" {
		t.Fatalf("create --json: %s (%v)", out, err)
	}

	ls := rathOK(t, home, "token", "ls")
	random := strings.TrimPrefix(secret, auth.TokenPrefix)
	if strings.Contains(ls, random) || strings.Contains(ls, strings.TrimPrefix(created.Secret, auth.TokenPrefix)) {
		t.Fatalf("ls shows a secret:\n%s", ls)
	}
	if !strings.Contains(ls, "ci") || !strings.Contains(ls, "acme") || !strings.Contains(ls, "run.create,run.read") {
		t.Fatalf("ls:\n%s", ls)
	}
	var infos []auth.Info
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "token", "ls")), &infos); err != nil || len(infos) != 2 {
		t.Fatalf("ls --json: %v %v", infos, err)
	}
	first := infos[0]
	if first.Name != "ci" || first.Expires.IsZero() || !first.Revoked.IsZero() {
		t.Fatalf("first token %+v", first)
	}

	rathOK(t, home, "token", "revoke", first.ID)
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "token", "ls")), &infos); err != nil || infos[0].Revoked.IsZero() || !infos[1].Revoked.IsZero() {
		t.Fatalf("after revoke: %+v %v", infos, err)
	}
	if code, _, errs := rathIn(t, home, "", "token", "revoke", "ses_nope"); code == 0 || !strings.Contains(errs, "no such token") {
		t.Fatalf("revoke unknown: exit %d, %s", code, errs)
	}
	if g := rathOK(t, home, "token", "grants"); !strings.Contains(g, "approval.decide") {
		t.Fatalf("grants:\n%s", g)
	}
	// Every change is in the audit log, the failed revoke too; the log
	// verifies.
	var recs []struct {
		Kind, Action, Resource, Outcome, Principal string
	}
	if err := json.Unmarshal([]byte(rathOK(t, home, "--json", "audit", "ls", "--kind", "token")), &recs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if !strings.HasPrefix(r.Principal, "cli:") {
			t.Errorf("a token change by %q, want the command line's operator", r.Principal)
		}
		got = append(got, r.Action+" "+r.Outcome)
	}
	want := []string{"token.revoke failed", "token.revoke ok", "token.create ok", "token.create ok"} // newest first
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("audited token changes: %v, want %v", got, want)
	}
	if !strings.Contains(recs[1].Resource, first.ID) {
		t.Fatalf("the revoke names %q, not the token %s", recs[1].Resource, first.ID)
	}
	rathOK(t, home, "audit", "verify")
}
