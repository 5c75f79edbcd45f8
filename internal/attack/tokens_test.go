package attack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// grantsOwner are what the owner and its peers of other scopes hold.
var grantsOwner = []string{"session.*", "run.*", "approval.*", "schedule.*", "webhook.*"}

// tokens creates the suite's tokens with `rath token create`, as an
// operator would, and revokes one.
func (a *attack) tokens(t *testing.T) {
	t.Helper()
	mk := func(name, tenant, project string, admin bool, grants ...string) {
		args := []string{"--json", "token", "create", "--name", name, "--tenant", tenant}
		if project != "" {
			args = append(args, "--project", project)
		}
		if admin {
			args = append(args, "--admin")
		}
		for _, g := range grants {
			args = append(args, "--grant", g)
		}
		var info struct{ ID, Secret string }
		decode(t, a.mustCLI(t, args...), &info)
		if !strings.HasPrefix(info.Secret, "rath_") || info.ID == "" {
			t.Fatalf("token %s: %+v", name, info)
		}
		a.tok[name], a.tokID[name] = info.Secret, info.ID
		a.secrets = append(a.secrets, info.Secret)
	}
	mk("operator", "default", "", false, "cluster.read", "run.*", "webhook.*", "session.read")
	mk("acme-admin", "acme", "", true)
	mk("acme-web", "acme", "web", false, grantsOwner...)
	mk("acme-read", "acme", "", false, "session.read", "run.read", "approval.read", "schedule.read", "webhook.read")
	mk("acme-api", "acme", "api", false, grantsOwner...)
	mk("acme-metrics", "acme", "web", false, "metrics.read")
	mk("acme-ci", "acme", "", false, "session.read")
	mk("acme-revoked", "acme", "web", false, grantsOwner...)
	mk("globex-admin", "globex", "", true)
	mk("globex-lab", "globex", "lab", false, "session.*", "run.*")
	a.mustCLI(t, "token", "revoke", a.tokID["acme-revoked"])
}

// secretFiles writes the tenants' webhook signing secrets under their
// roots, and a file outside every root.
func (a *attack) secretFiles(t *testing.T) {
	t.Helper()
	for _, f := range []struct{ path, value string }{
		{"acme/hook.key", "ACME-SIGNING-SECRET-0c1d2e3f4a5b"},
		{"globex/hook.key", "GLOBEX-SIGNING-SECRET-9a8b7c6d5e4f"},
		{"operator.key", "OPERATOR-ONLY-SECRET-13572468"},
	} {
		p := filepath.Join(a.secdir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.value), 0o600); err != nil {
			t.Fatal(err)
		}
		a.secrets = append(a.secrets, f.value)
	}
}
