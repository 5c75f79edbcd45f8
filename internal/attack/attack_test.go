package attack

import (
	"path/filepath"
	"testing"
)

// attack is the suite's state: the binary, the home, the main server,
// the tokens and the owner's objects, and what every answer carried.
type attack struct {
	bin, home string
	secdir    string // the secret roots the tenants are granted, outside the home
	srv       *server
	logs      []*syncBuffer // every server process's stdout and stderr
	seen      seen

	// secrets must appear in no stored byte, log or answer; handed maps
	// a secret to the one answer that hands it to its creator.
	secrets []string
	handed  map[string]string

	tok   map[string]string // token name → its secret
	tokID map[string]string // token name → its id

	// The owner's (acme/web's) objects.
	run, out, imp, fork, hook, sched, waiting string
	marker                                    string
}

// probe is one attack, run as a subtest of its name.
type probe struct {
	name string
	run  func(t *testing.T, a *attack)
}

// TestAttack starts rath serve as a real process and attacks it over
// HTTP; every probe is a subtest named after it (see the package
// comment). A token-less server first, then the two tenants' server
// with a worker, then the store sealed after its last token.
func TestAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("the attack suite builds rath and starts servers; not with -short")
	}
	dir := t.TempDir()
	a := &attack{bin: buildRath(t, dir), home: filepath.Join(dir, "home"), secdir: filepath.Join(dir, "secrets"),
		handed: map[string]string{}, tok: map[string]string{}, tokID: map[string]string{}}

	// A store without a token: loopback requests act as the local
	// principal, so Host and origin are all that guard it.
	srv0 := a.serve(t)
	for _, p := range []probe{
		{"tokenless/dns-rebinding", probeDNSRebinding},
		{"tokenless/cross-origin-v1", probeCrossOriginV1},
		{"tokenless/cross-origin-river", probeCrossOriginRiver},
	} {
		t.Run(p.name, func(t *testing.T) { p.run(t, a.with(srv0)) })
	}
	srv0.stop(t)

	a.tokens(t)
	a.secretFiles(t)
	a.srv = a.serve(t, "--worker",
		"--secret-root", "acme=secret://file"+filepath.Join(a.secdir, "acme"),
		"--secret-root", "globex=secret://file"+filepath.Join(a.secdir, "globex"))
	defer a.srv.kill()
	a.seed(t)
	for _, p := range []probe{
		{"matrix", probeMatrix},
		{"not-found-identical", probeNotFoundIdentical},
		{"cluster-read", probeClusterRead},
		{"bodies", probeBodies},
		{"bodies/import-413", probeImportTooLarge},
		{"bodies/bad-workflow-input", probeBadWorkflowInput},
		{"bodies/params", probeParams},
		{"webhooks/refused-targets", probeWebhookTargets},
		{"webhooks/connect-time", probeWebhookConnectTime},
		{"webhooks/secret-roots", probeWebhookSecretRoots},
		{"webhooks/url-credentials", probeWebhookURLCredentials},
		{"schedule-interval", probeScheduleInterval},
		{"approval-by", probeApprovalBy},
		{"scope-names", probeScopeNames},
		{"builtin-policy", probeBuiltinPolicy},
		{"policy-paths", probePolicyPaths},
		{"streams", probeStreams},
		{"revocation", probeRevocation},
		{"expiry", probeExpiry},
		{"surface", probeSurface},
	} {
		t.Run(p.name, func(t *testing.T) { p.run(t, a) })
	}
	a.srv.stop(t)

	t.Run("seal", func(t *testing.T) { probeSeal(t, a) })
	t.Run("failed-auth-audit", func(t *testing.T) { probeFailedAuthAudit(t, a) })
	t.Run("secret-scan", func(t *testing.T) { probeSecretScan(t, a) })
	t.Run("audit-witness", func(t *testing.T) { probeAuditWitness(t, a) })
}

// with points the probes at another server than the main one.
func (a *attack) with(s *server) *attack {
	a.srv = s
	return a
}

// url is the main server's base URL.
func (a *attack) url() string { return a.srv.url }
