package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/api"
	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/auth"
	"github.com/openrath/rath/session"
)

// Before the store holds a token, loopback acts as the local principal;
// once one exists every request needs one. A token opens exactly the
// routes its grants name — a route it lacks the grant of is a 403 naming
// the grant, before the route does anything — and a revoked one nothing.
// Every decision and refusal is in the audit log.
func TestGrantsOnRoutes(t *testing.T) {
	st := openStore(t)
	ctx := testCtx(t)
	s := session.FromUser("hello")
	commit(t, st, s, "")
	tokens := auth.NewTokens(st)
	alog, err := audit.Open(ctx, st, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alog.Close() })
	_, ts := newTestServer(t, st, Options{Tokens: tokens, Audit: alog})
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	if r := call(t, "GET", ts.URL+"/v1/sessions/"+string(s.ID()), ""); r.status != 200 {
		t.Fatalf("no token in the store, loopback: %d %s", r.status, r.body)
	}
	secret, info, err := tokens.Create(ctx, auth.Spec{Name: "reader", Grants: []string{"session.read", "run.read"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, "GET", ts.URL+"/v1/sessions/"+string(s.ID()), ""); r.status != 401 || errCode(r) != "unauthenticated" {
		t.Fatalf("a token exists, no credential: %d %s", r.status, r.body)
	}
	if r := call(t, "GET", ts.URL+"/v1/sessions/"+string(s.ID()), "", bearer("rath_nope")...); r.status != 401 {
		t.Fatalf("an unknown token: %d %s", r.status, r.body)
	}
	if r := call(t, "GET", ts.URL+"/v1/sessions/"+string(s.ID()), "", bearer(secret)...); r.status != 200 {
		t.Fatalf("session.read: %d %s", r.status, r.body)
	}
	for _, tc := range []struct{ method, path, body, grant string }{
		{"POST", "/v1/sessions/" + string(s.ID()) + "/fork", `{}`, "session.write"},
		{"POST", "/v1/runs", `{"workflow":"w"}`, "run.create"},
		{"POST", "/v1/approvals/" + string(s.ID()), `{"verdict":"approve","by":"x"}`, "approval.decide"},
		{"GET", "/v1/webhooks", "", "webhook.read"},
	} {
		r := call(t, tc.method, ts.URL+tc.path, tc.body, bearer(secret)...)
		if r.status != 403 || errCode(r) != "forbidden" || !strings.Contains(string(r.body), tc.grant) {
			t.Errorf("%s %s without %s: %d %s", tc.method, tc.path, tc.grant, r.status, r.body)
		}
	}
	if err := tokens.Revoke(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	if r := call(t, "GET", ts.URL+"/v1/sessions/"+string(s.ID()), "", bearer(secret)...); r.status != 401 {
		t.Fatalf("a revoked token: %d %s", r.status, r.body)
	}

	recs, err := alog.List(ctx, audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var denied, allowed, unauth int
	for _, rec := range recs {
		switch {
		case rec.Kind == audit.KindGrant && rec.Outcome == audit.OutcomeDenied && rec.Principal == "token:"+info.ID:
			denied++
		case rec.Kind == audit.KindGrant && rec.Outcome == audit.OutcomeAllowed:
			allowed++
		case rec.Kind == audit.KindAuthentication && rec.Outcome == audit.OutcomeDenied:
			unauth++
		}
		if rec.RequestID == "" {
			t.Errorf("an audit record without its request's id: %+v", rec)
		}
	}
	if denied != 4 || allowed != 2 || unauth != 3 {
		t.Fatalf("audited %d denied grants (want 4), %d allowed (want 2), %d refused authentications (want 3):\n%+v", denied, allowed, unauth, recs)
	}
}

// A server that listens beyond loopback never acts as the local
// principal, whatever Host the request names.
func TestNoImplicitPrincipalOffLoopback(t *testing.T) {
	st := openStore(t)
	s, err := New(st, Options{Addr: "0.0.0.0:7474", Token: "the-servers-own", Tokens: auth.NewTokens(st)})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "http://localhost/v1/sessions", nil)
	req.Host = "localhost"
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("no credential on a public server, Host localhost: %d %s", w.Code, w.Body)
	}
}

// Every route names a grant auth knows (and not "*"), the same the OpenAPI
// document gives it (x-rath-grant).
func TestRouteGrants(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Grant string `json:"x-rath-grant"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	known := []string{}
	for _, g := range auth.Grants() {
		known = append(known, g.Name)
	}
	for _, rt := range v1Routes {
		if !slices.Contains(known, rt.grant) || rt.grant == auth.Admin {
			t.Errorf("%s %s needs %q, not a grant of auth.Grants", rt.method, rt.path, rt.grant)
		}
		if got := doc.Paths[rt.path][strings.ToLower(rt.method)].Grant; got != rt.grant {
			t.Errorf("%s %s: the document says x-rath-grant %q, the route %q", rt.method, rt.path, got, rt.grant)
		}
	}
}

// errCode is the code of a /v1 error answer.
func errCode(r response) string {
	var e v1Error
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// Run control over /v1 — a cancel that lands, one refused — is in the
// audit log: who, what, on which run, how it ended.
func TestRunControlAudited(t *testing.T) {
	st := openStore(t)
	ctx := testCtx(t)
	alog, err := audit.Open(ctx, st, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alog.Close() })
	id := session.NewID()
	runs := &v1FakeRuns{runs: []*v1FakeRun{{ID: id, Workflow: "echo", State: "running"}}}
	_, ts := newTestServer(t, st, Options{Runs: runs, Audit: alog})
	for i, want := range []int{200, 409} {
		if r := call(t, "POST", ts.URL+"/v1/runs/"+string(id)+"/cancel", `{"by":"ana","reason":"wrong input"}`); r.status != want {
			t.Fatalf("cancel %d: %d %s", i+1, r.status, r.body)
		}
	}
	recs, err := alog.List(ctx, audit.Filter{Kind: audit.KindRunControl})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d run-control records, want 2: %+v", len(recs), recs)
	}
	last, first := recs[0], recs[1] // newest first
	if first.Outcome != audit.OutcomeOK || last.Outcome != audit.OutcomeFailed || first.Action != "run.cancel" ||
		first.Resource != "run/"+string(id) || first.Principal != "local:local" || !strings.Contains(first.Reason, "by local:local (ana): wrong input") {
		t.Fatalf("records: %+v / %+v", first, last)
	}
}

// A token of another tenant never reads the cluster's state, however it
// was granted: an admin of acme is refused every cluster.read route,
// naming why; an operator's token of the default tenant is not.
func TestClusterReadIsTheOperators(t *testing.T) {
	st := openStore(t)
	ctx := testCtx(t)
	tokens := auth.NewTokens(st)
	_, ts := newTestServer(t, st, Options{Tokens: tokens})
	acme, _, err := tokens.Create(ctx, auth.Spec{Name: "acme admin", Tenant: "acme", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	op, _, err := tokens.Create(ctx, auth.Spec{Name: "operator", Grants: []string{"cluster.read"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/cluster", "/v1/cluster/events", "/v1/workers", "/v1/queues"} {
		r := call(t, "GET", ts.URL+path, "", "Authorization", "Bearer "+acme)
		if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "operator") {
			t.Errorf("GET %s as an admin of acme: %d %s", path, r.status, r.body)
		}
		if r := call(t, "GET", ts.URL+path, "", "Authorization", "Bearer "+op); r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
			t.Errorf("GET %s as the operator: %d %s", path, r.status, r.body)
		}
	}
}
