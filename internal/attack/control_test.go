package attack

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// probeClusterRead: the cluster's own state (every scope's runs) is an
// operator's: an admin of tenant acme is refused it, saying why, and
// cannot be given it; the default tenant's operator reads it.
func probeClusterRead(t *testing.T, a *attack) {
	for _, path := range []string{"/v1/cluster", "/v1/workers", "/v1/queues", "/v1/cluster/events"} {
		for _, name := range []string{"acme-admin", "globex-admin"} {
			r := a.do(t, a.url(), req{method: "GET", path: path, bearer: a.tok[name], stream: true})
			if r.status != http.StatusForbidden || !strings.Contains(r.body, "cluster.read") {
				t.Errorf("%s: GET %s: %d, want 403 naming cluster.read: %.300s", name, path, r.status, r.body)
			}
		}
		if r := a.do(t, a.url(), req{method: "GET", path: path, bearer: a.tok["operator"], stream: true}); r.status != http.StatusOK {
			t.Errorf("operator: GET %s: %d, want 200: %.300s", path, r.status, r.body)
		}
	}
	for _, g := range []string{"cluster.read", "cluster.*"} {
		if out, errOut, code := a.cli(t, "token", "create", "--tenant", "acme", "--grant", g); code == 0 {
			t.Errorf("rath token create --tenant acme --grant %s: exit 0: %s%s", g, out, errOut)
			a.secrets = append(a.secrets, strings.TrimSpace(out))
		}
	}
}

// probeScheduleInterval: a tenant cannot make a schedule fire runs
// faster than the server's minimum interval (one second by default).
func probeScheduleInterval(t *testing.T, a *attack) {
	own := a.tok["acme-web"]
	for _, cron := range []string{"@every 1ms", "@every 999ms", "@every 1500ms", "@every 0s", "@every -1s", "@every 1ns"} {
		b, _ := json.Marshal(map[string]any{"name": "fast", "workflow": "cluster", "cron": cron, "paused": true})
		if r := a.do(t, a.url(), req{method: "POST", path: "/v1/schedules", body: string(b), bearer: own}); r.status != http.StatusBadRequest {
			t.Errorf("a schedule %q: %d, want 400: %.300s", cron, r.status, r.body)
		}
	}
	for _, name := range []string{"..", ".", "../etc", "a/b", "x\x00y"} {
		b, _ := json.Marshal(map[string]any{"name": name, "workflow": "cluster", "cron": "@daily", "paused": true})
		if r := a.do(t, a.url(), req{method: "POST", path: "/v1/schedules", body: string(b), bearer: own}); r.status != http.StatusBadRequest {
			t.Errorf("a schedule named %q: %d, want 400: %.300s", name, r.status, r.body)
		}
	}
	a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/schedules", bearer: own,
		body: `{"name":"hourly","workflow":"cluster","cron":"@every 1h","paused":true}`})
}

// probeApprovalBy: a verdict and a cancel are recorded as the principal
// that made them, whatever name the body gives.
func probeApprovalBy(t *testing.T, a *attack) {
	own, ownID := a.tok["acme-web"], a.tokID["acme-web"]
	a.must(t, a.url(), http.StatusOK, req{method: "POST", path: "/v1/approvals/" + a.waiting, bearer: own,
		body: `{"verdict":"approve","by":"ceo","reason":"the attack"}`})
	a.waitRun(t, own, a.waiting, inState("done"))
	var recs []struct{ Action, Resource, Reason, Principal, Outcome string }
	decode(t, a.mustCLI(t, "--json", "audit", "ls", "--kind", "run_control", "--limit", "1000"), &recs)
	found := false
	for _, r := range recs {
		if r.Action == "approval.decide" && strings.Contains(r.Resource, a.waiting) && r.Outcome == "ok" {
			found = true
			if !strings.Contains(r.Reason, ownID) || strings.Contains(r.Reason, "by ceo") {
				t.Errorf("the verdict is recorded as %q (principal %q), want the token %s first", r.Reason, r.Principal, ownID)
			}
		}
	}
	if !found {
		t.Errorf("no audit record of the verdict on %s: %+v", a.waiting, recs)
	}
	id := a.submit(t, own, "cluster", `{"steps":1,"latency_ms":1,"idempotent":true,"approval":true}`)
	a.waitRun(t, own, id, inState("waiting_approval"))
	a.must(t, a.url(), http.StatusOK, req{method: "POST", path: "/v1/runs/" + id + "/cancel", bearer: own, body: `{"by":"ceo","reason":"the attack"}`})
	r := a.waitRun(t, own, id, inState("cancelled"))
	if !strings.Contains(r.Cancel, ownID) || strings.HasPrefix(r.Cancel, "ceo") {
		t.Errorf("the cancel is recorded as %q, want the token %s", r.Cancel, ownID)
	}
	for _, by := range []string{"a\x1b[31mb", strings.Repeat("x", 10000)} {
		b, _ := json.Marshal(map[string]string{"by": by})
		if r := a.do(t, a.url(), req{method: "POST", path: "/v1/runs/" + a.run + "/cancel", bearer: own, body: string(b)}); r.status != http.StatusBadRequest {
			t.Errorf("a cancel by %.20q: %d, want 400: %.300s", by, r.status, r.body)
		}
	}
}

// probeScopeNames: "." and ".." (and dots alone) are no tenant or
// project, which would read as a path wherever a name becomes one.
func probeScopeNames(t *testing.T, a *attack) {
	for _, args := range [][]string{
		{"--tenant", ".."}, {"--tenant", "."}, {"--tenant", "..."}, {"--tenant", "acme", "--project", ".."},
		{"--tenant", "acme", "--project", "."}, {"--tenant", "../globex"}, {"--tenant", "a/b"},
	} {
		out, errOut, code := a.cli(t, append([]string{"token", "create", "--grant", "run.read"}, args...)...)
		if code == 0 {
			t.Errorf("rath token create %v: exit 0", args)
			a.secrets = append(a.secrets, strings.TrimSpace(out))
		} else if strings.Contains(out, "rath_") {
			t.Errorf("rath token create %v printed a token: %s%s", args, out, errOut)
		}
	}
	if out, errOut, code := a.cli(t, "quota", "set", "--tenant", "..", "--project", "web", "--queued", "1"); code == 0 {
		t.Errorf("rath quota set --tenant ..: exit 0: %s%s", out, errOut)
	}
}

// probeBuiltinPolicy: with no policy directory at all, a high-risk tool
// call (run_command) of a tenant's run waits for a person's approval;
// it does not run.
func probeBuiltinPolicy(t *testing.T, a *attack) {
	if _, err := os.Stat(filepath.Join(a.home, "policies")); !os.IsNotExist(err) {
		t.Fatalf("the home has a policy directory (%v): this probe needs none", err)
	}
	own := a.tok["acme-web"]
	id := a.submit(t, own, "builtin-tools", "")
	r := a.waitRun(t, own, id, inState("waiting_approval", "done", "failed", "needs_review"))
	if r.State != "waiting_approval" {
		t.Errorf("a run calling run_command without a policy: %s (%s), want it waiting for approval", r.State, r.Error)
	}
	if list := a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/approvals", bearer: own}); !strings.Contains(list, id) || !strings.Contains(list, "run_command") {
		t.Errorf("the run is not among the approvals, asking for run_command: %.500s", list)
	}
	a.must(t, a.url(), http.StatusOK, req{method: "POST", path: "/v1/runs/" + id + "/cancel", bearer: own, body: `{}`})
	a.waitRun(t, own, id, inState("cancelled"))
}

// probePolicyPaths: a policy file the operator broke denies its
// project's runs, and what the tenant sees of it names the file within
// the policy directory, never the server's path.
func probePolicyPaths(t *testing.T, a *attack) {
	path := filepath.Join(a.home, "policies", "globex", "lab.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"rules": [{"name": "broken", "when": "action.tool ==", "effect": "deny"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lab := a.tok["globex-lab"]
	var r run
	// The runtime follows the directory, created after it started:
	// runs until one is decided by the broken file.
	for deadline := time.Now().Add(60 * time.Second); ; {
		id := a.submit(t, lab, "cluster", `{"steps":1,"latency_ms":1,"idempotent":true}`)
		r = a.waitRun(t, lab, id, inState("done", "failed"))
		if r.State == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if r.State != "failed" || !strings.Contains(r.Error, "globex/lab.json") {
		t.Fatalf("a run under a broken policy file: %s %q, want failed naming globex/lab.json", r.State, r.Error)
	}
	seen := []string{r.Error,
		a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/runs/" + r.ID, bearer: lab}),
		a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/runs/" + r.ID + "/events", bearer: lab, stream: true}),
		a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/sessions?limit=200", bearer: lab}),
	}
	var page struct{ Items []struct{ ID string } }
	decode(t, seen[3], &page)
	for _, s := range page.Items {
		seen = append(seen, a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/sessions/" + s.ID + "/export", bearer: lab}))
	}
	for _, s := range seen {
		if strings.Contains(s, a.home) || strings.Contains(s, filepath.Dir(a.home)) {
			t.Errorf("a server path reaches the tenant: %.500s", s)
		}
	}
}
