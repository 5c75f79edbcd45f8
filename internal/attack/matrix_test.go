package attack

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// caller is a principal of the scope matrix and what it must get.
type caller struct {
	name, bearer string
	want         func(o op) []int
}

// probeMatrix asks every /v1 operation of the served document as
// principals that must not see acme/web's objects, and as a reader of
// acme, and fails on any status but the documented one and on any byte
// of the owner's data in an answer to another scope.
func probeMatrix(t *testing.T, a *attack) {
	ops := a.operations(t)
	otherScope := func(o op) []int {
		switch o.kind {
		case "cluster":
			return []int{http.StatusForbidden}
		case "list":
			return []int{http.StatusOK, http.StatusCreated}
		}
		return []int{http.StatusNotFound}
	}
	only := func(s int) func(op) []int { return func(op) []int { return []int{s} } }
	readGrants := []string{"session.read", "run.read", "approval.read", "schedule.read", "webhook.read"}
	callers := []caller{
		{"another tenant", a.tok["globex-admin"], otherScope},
		{"another project", a.tok["acme-api"], otherScope},
		{"no grant", a.tok["acme-metrics"], only(http.StatusForbidden)},
		{"revoked token", a.tok["acme-revoked"], only(http.StatusUnauthorized)},
		{"forged token", "rath_" + strings.Repeat("A", 43), only(http.StatusUnauthorized)},
		{"a JWT no one issued", "eyJhbGciOiJub25lIn0.eyJ0ZW5hbnQiOiJhY21lIiwiZ3JhbnRzIjpbIioiXX0.", only(http.StatusUnauthorized)},
		{"no credential", "", only(http.StatusUnauthorized)},
	}
	for _, c := range callers {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			for _, o := range ops {
				r := a.do(t, a.url(), a.request(c, o))
				if want := c.want(o); !slices.Contains(want, r.status) {
					t.Errorf("%s %s: %d, want one of %v: %.300s", o.method, o.path, r.status, want, r.body)
				}
				if r.status >= 400 {
					errorOf(t, r.body)
				}
				for _, s := range a.owned() {
					// An error may repeat what the request named.
					if strings.Contains(r.body, s) && !strings.Contains(o.path+o.body, s) {
						t.Errorf("%s %s: the answer carries acme/web's %q: %.300s", o.method, o.path, s, r.body)
					}
				}
			}
		})
	}
	// A reader of all of acme reads acme/web's objects and is refused
	// what its grants do not name.
	t.Run("read-only", func(t *testing.T) {
		for _, o := range ops {
			r := a.do(t, a.url(), a.request(caller{name: "reader", bearer: a.tok["acme-read"]}, o))
			switch {
			case o.kind == "cluster" || !slices.Contains(readGrants, o.grant):
				if r.status != http.StatusForbidden || !strings.Contains(r.body, o.grant) {
					t.Errorf("%s %s: %d, want 403 naming %s: %.300s", o.method, o.path, r.status, o.grant, r.body)
				}
			case r.status >= 400:
				t.Errorf("%s %s: %d, want it read: %.300s", o.method, o.path, r.status, r.body)
			}
		}
	})
	// The owner finds its objects where the others found nothing: the
	// probes above can fail.
	t.Run("owner", func(t *testing.T) {
		own := a.tok["acme-web"]
		for path, want := range map[string]string{
			"/v1/sessions?limit=200":            a.imp,
			"/v1/runs?limit=200":                a.run,
			"/v1/runs/" + a.run:                 a.out,
			"/v1/schedules":                     a.sched,
			"/v1/webhooks":                      a.hook,
			"/v1/approvals":                     a.waiting,
			"/v1/sessions/" + a.imp + "/events": a.marker,
		} {
			r := a.do(t, a.url(), req{method: "GET", path: path, bearer: own, stream: strings.HasSuffix(path, "/events")})
			if r.status != http.StatusOK || !strings.Contains(r.body, want) {
				t.Errorf("owner: GET %s: %d without %q: %.300s", path, r.status, want, r.body)
			}
		}
	})
}

// request is o as c sends it.
func (a *attack) request(c caller, o op) req {
	body := strings.ReplaceAll(o.body, "%caller", strings.ReplaceAll(c.name, " ", "-"))
	q := req{method: o.method, path: o.path, body: body, bearer: c.bearer, stream: o.stream}
	if o.route == "/v1/sessions:import" {
		q.body, q.ctype = importLine("the caller's own, "+c.name), "application/x-ndjson"
	}
	return q
}

// probeNotFoundIdentical: another tenant's and another project's object
// reads, status and body, exactly as one that does not exist, on every
// operation that names one.
func probeNotFoundIdentical(t *testing.T, a *attack) {
	missing := map[string]string{a.sched: "zzzz-nightly"}
	for _, s := range []string{a.run, a.out, a.imp, a.fork, a.hook, a.waiting} {
		missing[s] = string(session.NewID())
	}
	swap := func(s string, m map[string]string) string {
		for from, to := range m {
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}
	back := map[string]string{}
	for from, to := range missing {
		back[to] = from
	}
	n := 0
	for _, name := range []string{"globex-admin", "acme-api"} {
		c := caller{name: name, bearer: a.tok[name]}
		for _, o := range a.operations(t) {
			if o.kind != "object" {
				continue
			}
			n++
			q := a.request(c, o)
			foreign := a.do(t, a.url(), q)
			q.path, q.body = swap(q.path, missing), swap(q.body, missing)
			none := a.do(t, a.url(), q)
			fb, nb := withoutRequestID(foreign.body), withoutRequestID(swap(none.body, back))
			if foreign.status != none.status || fb != nb {
				t.Errorf("%s: %s %s: acme/web's object answers\n\t%d %s\nand a missing one\n\t%d %s", name, o.method, o.route, foreign.status, fb, none.status, nb)
			}
			if foreign.status != http.StatusNotFound {
				t.Errorf("%s: %s %s: %d, want 404", name, o.method, o.path, foreign.status)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d requests named an object", n)
	}
}
