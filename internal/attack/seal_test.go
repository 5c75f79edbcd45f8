package attack

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitStatus asks q until it answers want, or fails after a while (the
// documented bound is 2 s between processes; the wait is generous so
// that a loaded machine does not fail it).
func (a *attack) waitStatus(t *testing.T, base string, want int, q req) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		r := a.do(t, base, q)
		if r.status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: still %d, want %d: %.300s", q.method, q.path, r.status, want, r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// probeRevocation: a token revoked with `rath token revoke` while the
// server runs is refused by it, and stays refused, on every route and
// on its streams.
func probeRevocation(t *testing.T, a *attack) {
	var info struct{ ID, Secret string }
	decode(t, a.mustCLI(t, "--json", "token", "create", "--name", "late", "--tenant", "acme", "--project", "web",
		"--grant", "session.read", "--grant", "run.*"), &info)
	a.secrets = append(a.secrets, info.Secret)
	q := req{method: "GET", path: "/v1/sessions/" + a.imp, bearer: info.Secret}
	a.waitStatus(t, a.url(), http.StatusOK, q)
	a.mustCLI(t, "token", "revoke", info.ID)
	a.waitStatus(t, a.url(), http.StatusUnauthorized, q)
	for i := 0; i < 5; i++ {
		for _, r := range []req{q,
			{method: "GET", path: "/v1/runs", bearer: info.Secret},
			{method: "GET", path: "/v1/sessions/" + a.imp + "/events", bearer: info.Secret, stream: true},
			{method: "POST", path: "/v1/runs", bearer: info.Secret, body: `{"workflow":"cluster","input":"{\"steps\":1}"}`},
		} {
			if got := a.do(t, a.url(), r); got.status != http.StatusUnauthorized {
				t.Errorf("a revoked token: %s %s: %d, want 401: %.300s", r.method, r.path, got.status, got.body)
			}
		}
	}
}

// probeExpiry: a token that expires is refused by the next request
// after its expiry, not a cache's lifetime later.
func probeExpiry(t *testing.T, a *attack) {
	var info struct {
		ID, Secret string
		Expires    time.Time
	}
	decode(t, a.mustCLI(t, "--json", "token", "create", "--name", "brief", "--tenant", "acme", "--project", "web",
		"--grant", "session.read", "--expires", "6s"), &info)
	a.secrets = append(a.secrets, info.Secret)
	if info.Expires.IsZero() {
		t.Fatalf("the token has no expiry: %+v", info)
	}
	q := req{method: "GET", path: "/v1/sessions/" + a.imp, bearer: info.Secret}
	r := a.do(t, a.url(), q)
	if time.Now().After(info.Expires) {
		t.Skip("the machine took longer than the token's life to use it once")
	}
	if r.status != http.StatusOK {
		t.Fatalf("a token not yet expired: %d: %.300s", r.status, r.body)
	}
	time.Sleep(time.Until(info.Expires) + 100*time.Millisecond)
	if r := a.do(t, a.url(), q); r.status != http.StatusUnauthorized {
		t.Errorf("the first request after the token expired: %d, want 401: %.300s", r.status, r.body)
	}
}

// probeSeal: once every token is revoked and `rath gc` has deleted
// them, loopback requests without a credential are still refused — the
// store remembers it had tokens — until the operator runs `rath token
// reopen --yes`.
func probeSeal(t *testing.T, a *attack) {
	var list []struct {
		ID      string
		Revoked *time.Time
	}
	decode(t, a.mustCLI(t, "--json", "token", "ls"), &list)
	for _, tk := range list {
		if tk.Revoked == nil {
			a.mustCLI(t, "token", "revoke", tk.ID)
		}
	}
	a.mustCLI(t, "gc", "--older-than", "0s")
	decode(t, a.mustCLI(t, "--json", "token", "ls"), &list)
	if len(list) != 0 {
		t.Logf("rath gc left %d revoked tokens", len(list))
	}
	srv := a.serve(t)
	defer srv.kill()
	for _, q := range []req{
		{method: "GET", path: "/v1/sessions"},
		{method: "GET", path: "/v1/runs"},
		{method: "GET", path: "/metrics"},
		{method: "POST", path: "/v1/runs", body: `{"workflow":"cluster","input":"{\"steps\":1}"}`},
	} {
		if r := a.do(t, srv.url, q); r.status != http.StatusUnauthorized {
			t.Errorf("no credential after the last token was revoked and collected: %s %s: %d, want 401: %.300s", q.method, q.path, r.status, r.body)
		}
	}
	if r := a.do(t, srv.url, req{method: "GET", path: "/river/"}); r.status == http.StatusOK {
		t.Errorf("River's UI is served on a sealed store: %.300s", r.body)
	}
	// A token, however old, still needs to work; none does.
	for name, secret := range a.tok {
		if r := a.do(t, srv.url, req{method: "GET", path: "/v1/sessions", bearer: secret}); r.status != http.StatusUnauthorized {
			t.Errorf("%s, revoked and collected: %d, want 401", name, r.status)
		}
	}
	srv.stop(t)

	// The operator's way back opens it: the probe can fail.
	out, errOut, code := a.cli(t, "token", "reopen", "--yes")
	if code != 0 {
		t.Fatalf("rath token reopen --yes: exit %d: %s%s", code, out, errOut)
	}
	srv = a.serve(t)
	defer srv.kill()
	if r := a.do(t, srv.url, req{method: "GET", path: "/v1/sessions"}); r.status != http.StatusOK {
		t.Errorf("after rath token reopen: %d, want 200: %.300s", r.status, r.body)
	}
	srv.stop(t)
	if !strings.Contains(a.mustCLI(t, "--json", "audit", "ls", "--kind", "token", "--limit", "1000"), "token.reopen") {
		t.Error("the reopen is not in the audit log")
	}
}
