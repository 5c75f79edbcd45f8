package attack

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
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

// with is a for probes of another server than the main one.
func (a *attack) with(s *server) *attack {
	a.srv = s
	return a
}

// url is the main server's base URL.
func (a *attack) url() string { return a.srv.url }

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

// run is a /v1 run as an attacker reads it.
type run struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Output string `json:"output"`
	Error  string `json:"error"`
	Cancel string `json:"cancel"` // who cancelled it, and why
}

// submit posts a run of the cluster example and returns its id.
func (a *attack) submit(t *testing.T, bearer, workflow, input string) string {
	t.Helper()
	m := map[string]any{"workflow": workflow}
	if input != "" {
		m["input"] = input
	}
	b, _ := json.Marshal(m)
	var r run
	decode(t, a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/runs", body: string(b), bearer: bearer}), &r)
	return r.ID
}

// waitRun polls the run until done says so, or fails after a minute.
func (a *attack) waitRun(t *testing.T, bearer, id string, done func(run) bool) run {
	t.Helper()
	var r run
	for deadline := time.Now().Add(90 * time.Second); ; {
		decode(t, a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/runs/" + id, bearer: bearer}), &r)
		if done(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: still %s (%s)", id, r.State, r.Error)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func inState(states ...string) func(run) bool {
	return func(r run) bool {
		for _, s := range states {
			if r.State == s {
				return true
			}
		}
		return false
	}
}

// seed makes the owner's (acme/web's) objects over /v1: a finished run,
// an imported session and its fork, a schedule, a webhook and a run
// waiting for approval.
func (a *attack) seed(t *testing.T) {
	t.Helper()
	own := a.tok["acme-web"]
	a.marker = "ACME-WEB-PRIVATE-5e7a"
	a.run = a.submit(t, own, "cluster", `{"steps":2,"latency_ms":1,"idempotent":true}`)
	a.waiting = a.submit(t, own, "cluster", `{"steps":1,"latency_ms":1,"idempotent":true,"approval":true}`)
	r := a.waitRun(t, own, a.run, inState("done", "failed"))
	if r.State != "done" || r.Output == "" {
		t.Fatalf("the owner's run: %+v", r)
	}
	a.out = r.Output
	a.waitRun(t, own, a.waiting, inState("waiting_approval"))

	var created struct{ ID string }
	decode(t, a.must(t, a.url(), http.StatusOK, req{method: "POST", path: "/v1/sessions:import", body: importLine(a.marker),
		ctype: "application/x-ndjson", bearer: own}), &created)
	a.imp = created.ID
	decode(t, a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/sessions/" + a.imp + "/fork", body: "{}", bearer: own}), &created)
	a.fork = created.ID
	a.sched = "acme-nightly"
	a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/schedules", bearer: own,
		body: `{"name":"acme-nightly","workflow":"cluster","cron":"@daily","paused":true}`})
	var hook struct{ ID, Secret string }
	body := a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/webhooks", bearer: own,
		body: `{"url":"https://hooks.attack.invalid/acme-hook"}`})
	decode(t, body, &hook)
	a.hook = hook.ID
	if hook.Secret == "" {
		t.Fatalf("the webhook's answer hands no signing key: %s", body)
	}
	a.secrets = append(a.secrets, hook.Secret)
	a.handed[hook.Secret] = body
	for _, s := range []string{a.run, a.out, a.imp, a.fork, a.hook, a.waiting} {
		if s == "" {
			t.Fatalf("an owner's object has no id: %q", []string{a.run, a.out, a.imp, a.fork, a.hook, a.waiting})
		}
	}
}

// importLine is a new session of one user message, in the JSONL rath
// exports and imports, as an attacker would write it.
func importLine(text string) string {
	var b bytes.Buffer
	if err := session.Encode(&b, session.FromUser(text)); err != nil {
		panic(err)
	}
	return b.String()
}
