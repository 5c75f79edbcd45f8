package attack

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// op is one operation of the served OpenAPI document, made concrete on
// the owner's objects.
type op struct {
	method, route string // GET, /v1/runs/{id}
	grant         string // x-rath-grant
	path, body    string // the request naming the owner's objects
	stream        bool
	takesBody     bool // the document gives it a request body
	// kind: "object" names one of the owner's objects (another scope
	// gets 404); "list" lists or creates in the caller's own scope;
	// "cluster" is the operator's cluster state (cluster.read).
	kind string
}

// bodies are the request bodies of the operations that take one, by
// operation; a POST not named here sends {}. %imp and the like are
// replaced by the owner's objects.
var bodies = map[string]string{
	"POST /v1/sessions:merge":     `{"a":"%imp","b":"%fork"}`,
	"POST /v1/runs":               `{"workflow":"cluster","input":"{\"steps\":1,\"latency_ms\":1,\"idempotent\":true}"}`,
	"POST /v1/runs/{id}/review":   `{"verdict":"happened","by":"x"}`,
	"POST /v1/approvals/{id}":     `{"verdict":"approve","by":"x"}`,
	"POST /v1/schedules":          `{"name":"%caller-nightly","workflow":"cluster","cron":"@daily","paused":true}`,
	"POST /v1/webhooks":           `{"url":"https://hooks.attack.invalid/%caller-hook"}`,
	"POST /v1/sessions/{id}/fork": `{}`,
}

// queries are the query strings of the operations that take one.
var queries = map[string]string{
	"GET /v1/sessions":         "?limit=200",
	"GET /v1/runs":             "?limit=200",
	"GET /v1/sessions:compare": "?a=%imp&b=%fork",
}

// objectRoutes name the owner's objects outside their path.
var objectRoutes = map[string]bool{"GET /v1/sessions:compare": true, "POST /v1/sessions:merge": true}

var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// operations reads the server's /openapi.json and makes each /v1
// operation concrete: a route added to the document joins every probe
// that walks them, or fails here if the suite cannot name its object.
func (a *attack) operations(t *testing.T) []op {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	decode(t, a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/openapi.json"}), &doc)
	var ops []op
	for route, methods := range doc.Paths {
		if !strings.HasPrefix(route, "/v1/") {
			continue
		}
		for m, raw := range methods {
			if m == "parameters" {
				continue
			}
			var meta struct {
				Grant string          `json:"x-rath-grant"`
				Body  json.RawMessage `json:"requestBody"`
			}
			_ = json.Unmarshal(raw, &meta)
			o := op{method: strings.ToUpper(m), route: route, grant: meta.Grant, stream: strings.HasSuffix(route, "/events"), takesBody: meta.Body != nil}
			if o.grant == "" {
				t.Errorf("%s %s names no grant (x-rath-grant)", o.method, route)
			}
			key := o.method + " " + route
			o.path = pathParam.ReplaceAllStringFunc(route, func(p string) string { return a.fill(t, route, p) }) + a.subst(queries[key])
			o.body = a.subst(bodies[key])
			if o.body == "" && o.method == "POST" {
				o.body = "{}"
			}
			switch {
			case o.grant == "cluster.read":
				o.kind = "cluster"
			case objectRoutes[key] || pathParam.MatchString(route):
				o.kind = "object"
			default:
				o.kind = "list"
			}
			ops = append(ops, o)
		}
	}
	if len(ops) < 30 {
		t.Fatalf("the served OpenAPI document has %d /v1 operations", len(ops))
	}
	// A run that continues the owner's session names it in its body.
	ops = append(ops, op{method: "POST", route: "/v1/runs", grant: "run.create", path: "/v1/runs", kind: "object",
		body: `{"workflow":"cluster","session":"` + a.out + `"}`})
	sort.Slice(ops, func(i, j int) bool { return ops[i].method+ops[i].path < ops[j].method+ops[j].path })
	return ops
}

// fill is the owner's object a path parameter of route names.
func (a *attack) fill(t *testing.T, route, param string) string {
	t.Helper()
	seg := strings.Split(strings.TrimPrefix(route, "/v1/"), "/")[0]
	switch {
	case param == "{id}" && seg == "sessions":
		return a.imp
	case param == "{id}" && seg == "runs":
		return a.run
	case param == "{id}" && seg == "approvals":
		return a.waiting
	case param == "{id}" && seg == "webhooks":
		return a.hook
	case param == "{name}" && seg == "schedules":
		return a.sched
	}
	t.Errorf("the attack suite cannot name the owner's object for %s of %s: add it to attack.fill", param, route)
	return "unknown"
}

// subst replaces %imp and the like by the owner's objects.
func (a *attack) subst(s string) string {
	return strings.NewReplacer("%imp", a.imp, "%fork", a.fork, "%run", a.run, "%out", a.out).Replace(s)
}

// owned is every value of the owner's that no other scope may see.
func (a *attack) owned() []string {
	return []string{a.marker, a.run, a.out, a.imp, a.fork, a.hook, a.waiting, a.sched, "acme-hook"}
}
