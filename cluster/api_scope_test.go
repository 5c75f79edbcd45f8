package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/api"
	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/auth/authtest"
	"github.com/openrath/rath/cluster/clusterapi"
	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
)

// scopeReq is one request of the scope matrix: a route of /v1 with the
// owner's objects in its path and body.
type scopeReq struct {
	method, route, path, body string
	// list: the route lists or creates in the caller's own scope (200 or
	// 201 for a caller of another scope, with none of the owner's data);
	// else it names the owner's object (404 for another scope).
	list bool
	// stream: an event stream (read until its first event or its end).
	stream bool
}

// TestScopeMatrix: every /v1 route, asked by principals that must not see
// the objects of tenant acme's project web — a token of another tenant,
// one of another project of acme, one without the route's grant, a revoked
// token, an expired JWT from the identity provider, no credential — answers
// as documented (404 for another scope's object, 403 without the grant, 401
// otherwise), and no response or event stream carries a byte of acme/web's
// data (its ids, its text). The owner's own requests find everything (the
// matrix can fail).
func TestScopeMatrix(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		st := e.rt.Store
		tokens := auth.NewTokens(st)
		all := []string{"session.*", "run.*", "approval.*", "schedule.*", "webhook.*"}
		token := func(name, tenant, project string, grants ...string) (string, string) {
			secret, info, err := tokens.Create(ctx, auth.Spec{Name: name, Tenant: tenant, Project: project, Grants: grants})
			if err != nil {
				t.Fatal(err)
			}
			return secret, info.ID
		}
		owner, _ := token("owner", "acme", "web", all...)
		otherTenant, _ := token("globex", "globex", "web", all...)
		otherProject, _ := token("acme-api", "acme", "api", all...)
		noGrant, _ := token("metrics-only", "acme", "web", "metrics.read")
		revoked, revokedID := token("revoked", "acme", "web", all...)
		if err := tokens.Revoke(ctx, revokedID); err != nil {
			t.Fatal(err)
		}
		key := authtest.NewKey(t, "k1")
		is := authtest.NewIssuer(t, key.Public())
		oidc, err := auth.NewOIDC(ctx, auth.OIDCConfig{Issuer: is.URL(), Audience: "rath-api"})
		if err != nil {
			t.Fatal(err)
		}
		past := time.Now().Add(-2 * time.Hour)
		expired := key.Sign(t, authtest.Claims(is, "rath-api", map[string]any{"tenant": "acme", "project": "web", "grants": all,
			"iat": past.Unix(), "exp": past.Add(time.Hour).Unix()}))
		srv, err := server.New(st, server.Options{Runs: clusterapi.New(e.cl), Tokens: tokens, Authenticators: []auth.Authenticator{oidc}})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		defer ts.Close()
		e.worker("a")

		do := func(bearer, method, path, body string, stream bool) (int, string) {
			t.Helper()
			var rd io.Reader
			if body != "" {
				rd = strings.NewReader(body)
			}
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(rctx, method, ts.URL+path, rd)
			if err != nil {
				t.Fatal(err)
			}
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
				if strings.HasSuffix(path, ":import") {
					req.Header.Set("Content-Type", "application/x-ndjson")
				}
			}
			if bearer != "" {
				req.Header.Set("Authorization", "Bearer "+bearer)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			defer res.Body.Close()
			var b []byte
			if stream && res.StatusCode == http.StatusOK {
				// The history up to the first pause: what is there to see.
				buf := make([]byte, 64<<10)
				for len(b) < 1<<20 {
					n, err := res.Body.Read(buf)
					b = append(b, buf[:n]...)
					if err != nil || bytes.Contains(b, []byte("event: live")) || bytes.Contains(b, []byte("event: end")) {
						break
					}
				}
			} else {
				b, _ = io.ReadAll(res.Body)
			}
			return res.StatusCode, string(b)
		}
		must := func(want int, bearer, method, path, body string) string {
			t.Helper()
			status, got := do(bearer, method, path, body, false)
			if status != want {
				t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, got)
			}
			return got
		}

		// The owner's objects: a finished run (its input, output and
		// the sessions it wrote), a fork, an import, a schedule, a
		// webhook.
		const marker = "ACME-WEB-PRIVATE-7f31"
		in := `{"steps":2,"latency_ms":1,"idempotent":true}`
		body, _ := json.Marshal(map[string]any{"workflow": "cluster", "input": in})
		var run struct {
			ID     session.ID `json:"id"`
			State  string     `json:"state"`
			Output session.ID `json:"output"`
		}
		if err := json.Unmarshal([]byte(must(http.StatusCreated, owner, "POST", "/v1/runs", string(body))), &run); err != nil {
			t.Fatal(err)
		}
		e.waitFor("the owner's run done", 60*time.Second, func() bool {
			_ = json.Unmarshal([]byte(must(http.StatusOK, owner, "GET", "/v1/runs/"+string(run.ID), "")), &run)
			return run.State == "done"
		})
		imported := session.FromUser(marker)
		var jsonl bytes.Buffer
		if err := session.Encode(&jsonl, imported); err != nil {
			t.Fatal(err)
		}
		must(http.StatusOK, owner, "POST", "/v1/sessions:import", jsonl.String())
		var fork struct {
			ID session.ID `json:"id"`
		}
		if err := json.Unmarshal([]byte(must(http.StatusCreated, owner, "POST", "/v1/sessions/"+string(imported.ID())+"/fork", "{}")), &fork); err != nil {
			t.Fatal(err)
		}
		must(http.StatusCreated, owner, "POST", "/v1/schedules", `{"name":"acme-nightly","workflow":"cluster","cron":"@daily","paused":true}`)
		var hook struct {
			ID session.ID `json:"id"`
		}
		if err := json.Unmarshal([]byte(must(http.StatusCreated, owner, "POST", "/v1/webhooks", `{"url":"https://hooks.example.com/acme-hook"}`)), &hook); err != nil {
			t.Fatal(err)
		}
		secrets := []string{marker, string(run.ID), string(run.Output), string(imported.ID()), string(fork.ID), string(hook.ID), "acme-nightly", "acme-hook"}
		for _, s := range secrets[:6] {
			if s == "" {
				t.Fatalf("an owner's object has no id: %v", secrets)
			}
		}

		id, out, imp, hid := string(run.ID), string(run.Output), string(imported.ID()), string(hook.ID)
		reqs := []scopeReq{
			{"GET", "/v1/sessions", "/v1/sessions?limit=200", "", true, false},
			{"GET", "/v1/sessions", "/v1/sessions?q=" + imp[len(imp)-12:], "", true, false},
			{"GET", "/v1/sessions/{id}", "/v1/sessions/" + imp, "", false, false},
			{"GET", "/v1/sessions/{id}", "/v1/sessions/" + out, "", false, false},
			{"GET", "/v1/sessions/{id}/chunks", "/v1/sessions/" + imp + "/chunks", "", false, false},
			{"GET", "/v1/sessions/{id}/graph", "/v1/sessions/" + string(fork.ID) + "/graph", "", false, false},
			{"GET", "/v1/sessions/{id}/export", "/v1/sessions/" + imp + "/export", "", false, false},
			{"GET", "/v1/sessions/{id}/events", "/v1/sessions/" + imp + "/events", "", false, true},
			{"GET", "/v1/sessions/{id}/dossier", "/v1/sessions/" + out + "/dossier", "", false, false},
			{"POST", "/v1/sessions/{id}/fork", "/v1/sessions/" + imp + "/fork", "{}", false, false},
			{"POST", "/v1/sessions:import", "/v1/sessions:import", "", true, false}, // the caller's own import (below)
			{"GET", "/v1/sessions:compare", "/v1/sessions:compare?a=" + imp + "&b=" + string(fork.ID), "", false, false},
			{"POST", "/v1/sessions:merge", "/v1/sessions:merge", `{"a":"` + imp + `","b":"` + string(fork.ID) + `"}`, false, false},
			{"POST", "/v1/runs", "/v1/runs", `{"workflow":"cluster","input":"{\"steps\":1,\"latency_ms\":1,\"idempotent\":true}"}`, true, false},
			{"POST", "/v1/runs", "/v1/runs", `{"workflow":"cluster","session":"` + out + `"}`, false, false},
			{"GET", "/v1/runs", "/v1/runs?limit=200", "", true, false},
			{"GET", "/v1/runs/{id}", "/v1/runs/" + id, "", false, false},
			{"GET", "/v1/runs/{id}/events", "/v1/runs/" + id + "/events", "", false, true},
			{"POST", "/v1/runs/{id}/cancel", "/v1/runs/" + id + "/cancel", `{}`, false, false},
			{"POST", "/v1/runs/{id}/resume", "/v1/runs/" + id + "/resume", `{}`, false, false},
			{"POST", "/v1/runs/{id}/review", "/v1/runs/" + id + "/review", `{"verdict":"happened","by":"x"}`, false, false},
			{"GET", "/v1/approvals", "/v1/approvals", "", true, false},
			{"POST", "/v1/approvals/{id}", "/v1/approvals/" + id, `{"verdict":"approve","by":"x"}`, false, false},
			{"GET", "/v1/schedules", "/v1/schedules", "", true, false},
			{"POST", "/v1/schedules", "/v1/schedules", `{"name":"other-nightly","workflow":"cluster","cron":"@daily","paused":true}`, true, false},
			{"POST", "/v1/schedules/{name}/pause", "/v1/schedules/acme-nightly/pause", `{}`, false, false},
			{"POST", "/v1/schedules/{name}/resume", "/v1/schedules/acme-nightly/resume", `{}`, false, false},
			{"DELETE", "/v1/schedules/{name}", "/v1/schedules/acme-nightly", "", false, false},
			{"GET", "/v1/webhooks", "/v1/webhooks", "", true, false},
			{"POST", "/v1/webhooks", "/v1/webhooks", `{"url":"https://hooks.example.com/other-hook"}`, true, false},
			{"DELETE", "/v1/webhooks/{id}", "/v1/webhooks/" + hid, "", false, false},
			{"GET", "/v1/webhooks/{id}/deliveries", "/v1/webhooks/" + hid + "/deliveries", "", false, false},
			// The cluster's own state is an operator's (cluster.read),
			// which none of the callers holds.
			{"GET", "/v1/cluster", "/v1/cluster", "", false, false},
			{"GET", "/v1/cluster/events", "/v1/cluster/events", "", false, true},
			{"GET", "/v1/workers", "/v1/workers", "", false, false},
			{"GET", "/v1/queues", "/v1/queues", "", false, false},
		}
		coverage(t, reqs)
		clusterWide := func(r scopeReq) bool {
			return slices.Contains([]string{"/v1/cluster", "/v1/cluster/events", "/v1/workers", "/v1/queues"}, r.route)
		}
		callers := []struct {
			name, bearer string
			want         func(r scopeReq) []int
		}{
			{"another tenant", otherTenant, func(r scopeReq) []int {
				switch {
				case clusterWide(r):
					return []int{http.StatusForbidden}
				case r.list:
					return []int{http.StatusOK, http.StatusCreated}
				}
				return []int{http.StatusNotFound}
			}},
			{"another project", otherProject, nil},
			{"no grant", noGrant, func(scopeReq) []int { return []int{http.StatusForbidden} }},
			{"a revoked token", revoked, func(scopeReq) []int { return []int{http.StatusUnauthorized} }},
			{"an expired JWT", expired, func(scopeReq) []int { return []int{http.StatusUnauthorized} }},
			{"no credential", "", func(scopeReq) []int { return []int{http.StatusUnauthorized} }},
		}
		callers[1].want = callers[0].want
		for _, c := range callers {
			for _, r := range reqs {
				body := r.body
				if r.route == "/v1/sessions:import" {
					var own bytes.Buffer
					if err := session.Encode(&own, session.FromUser("the caller's own "+c.name)); err != nil {
						t.Fatal(err)
					}
					body = own.String()
				}
				status, got := do(c.bearer, r.method, r.path, body, r.stream)
				if want := c.want(r); !slices.Contains(want, status) {
					t.Errorf("%s: %s %s: status %d, want one of %v: %s", c.name, r.method, r.path, status, want, got)
				}
				for _, s := range secrets {
					// An error may name what the request named.
					if strings.Contains(got, s) && !strings.Contains(r.path+body, s) {
						t.Errorf("%s: %s %s: the response carries acme/web's %q:\n%s", c.name, r.method, r.path, s, got)
					}
				}
			}
		}

		// "Not yours" reads as "not there": every request another
		// tenant made of the owner's objects answers, status and body,
		// exactly as the same request of objects that do not exist.
		missing := map[string]string{"acme-nightly": "zzzz-nightly"}
		for _, s := range []string{id, out, imp, string(fork.ID), hid} {
			missing[s] = string(session.NewID())
		}
		swap := func(s string, from map[string]string) string {
			for a, b := range from {
				s = strings.ReplaceAll(s, a, b)
			}
			return s
		}
		back := map[string]string{}
		for a, b := range missing {
			back[b] = a
		}
		reqID := regexp.MustCompile(`"request_id":"[^"]*"`)
		for _, r := range reqs {
			if r.list || clusterWide(r) {
				continue
			}
			fs, foreign := do(otherTenant, r.method, r.path, r.body, r.stream)
			ns, none := do(otherTenant, r.method, swap(r.path, missing), swap(r.body, missing), r.stream)
			foreign, none = reqID.ReplaceAllString(foreign, ""), reqID.ReplaceAllString(swap(none, back), "")
			if fs != ns || foreign != none {
				t.Errorf("%s %s: another tenant's object answers\n\t%d %s\nbut a missing one\n\t%d %s", r.method, r.route, fs, foreign, ns, none)
			}
		}

		// The owner sees what the others could not: the same requests
		// find its objects.
		for _, r := range []scopeReq{reqs[0], reqs[1], reqs[2], reqs[16], reqs[23], reqs[28]} {
			status, got := do(owner, r.method, r.path, r.body, r.stream)
			if status != http.StatusOK {
				t.Fatalf("owner: %s %s: %d %s", r.method, r.path, status, got)
			}
			if !strings.Contains(got, imp) && !strings.Contains(got, id) && !strings.Contains(got, "acme-nightly") && !strings.Contains(got, hid) {
				t.Errorf("owner: %s %s shows none of its objects: %s", r.method, r.path, got)
			}
		}
		if status, got := do(owner, "GET", "/v1/sessions/"+imp+"/events", "", true); status != http.StatusOK || !strings.Contains(got, marker) {
			t.Errorf("owner: the session's events: %d %s", status, got)
		}
		// The scope the owner's objects were born in, as the store
		// keeps it.
		info, err := st.Info(ctx, run.Output)
		if err != nil || info.Labels["rath.tenant"] != "acme" || info.Labels["rath.project"] != "web" {
			t.Fatalf("the run's output is in %v (%v), want acme/web", info.Labels, err)
		}
	})
}

// coverage fails unless reqs ask every operation of the OpenAPI
// document: a route added later joins the matrix or this test fails.
func coverage(t *testing.T, reqs []scopeReq) {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	for _, r := range reqs {
		asked[r.method+" "+r.route] = true
	}
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for m := range ops {
			op := strings.ToUpper(m) + " " + path
			if m == "parameters" {
				continue
			}
			if !asked[op] {
				t.Errorf("the scope matrix does not ask %s", op)
			}
		}
	}
}
