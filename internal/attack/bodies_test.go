package attack

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// probeBodies sends every POST operation malformed, oversized and
// wrongly typed bodies as a principal that holds its grant: each is one
// clear 4xx with a /v1 error, never a 500 and never a success.
func probeBodies(t *testing.T, a *attack) {
	big := `{"workflow":"cluster","input":"` + strings.Repeat("A", 2<<20) + `"}`
	bad := map[string]string{
		"torn JSON":        `{"workflow":`,
		"not an object":    `[1,2,3]`,
		"wrong types":      `{"workflow":5,"input":[],"by":{},"verdict":7,"url":false,"name":1,"a":2,"b":3,"cron":null}`,
		"NUL bytes":        "{\"workflow\":\"\x00\",\"by\":\"\x00\"}",
		"invalid UTF-8":    "{\"workflow\":\"\xff\xfe\",\"verdict\":\"\xff\"}",
		"two objects":      `{} {}`,
		"deep nesting":     strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
		"over 1 MiB":       big,
		"huge number":      `{"at":1e999999,"steps":99999999999999999999999}`,
		"unknown verdict":  `{"verdict":"maybe","by":"x","url":"gopher://x","cron":"* * *","name":"../x","workflow":"../../etc"}`,
		"control in names": "{\"name\":\"a\\u0000b\",\"workflow\":\"cluster\",\"cron\":\"@daily\",\"by\":\"a\\u001bb\",\"verdict\":\"approve\"}",
	}
	bearer := a.tok["acme-admin"]
	for _, o := range a.operations(t) {
		if o.method != "POST" || o.route == "/v1/sessions:import" {
			continue
		}
		for name, body := range bad {
			q := req{method: "POST", path: o.path, body: body, bearer: bearer}
			r := a.do(t, a.url(), q)
			switch {
			case name == "over 1 MiB" && o.takesBody && r.status != http.StatusRequestEntityTooLarge:
				t.Errorf("%s %s with a body %s: %d, want 413: %.300s", o.method, o.path, name, r.status, r.body)
			case r.status < 400 || r.status >= 500:
				t.Errorf("%s %s with a body %s: %d, want a 4xx: %.300s", o.method, o.path, name, r.status, r.body)
			default:
				if e := errorOf(t, r.body); strings.Contains(e.Error.Message, "panic") || strings.Contains(e.Error.Message, "runtime error") {
					t.Errorf("%s %s with a body %s: %s", o.method, o.path, name, e.Error.Message)
				}
			}
		}
	}
	// The waiting run still waits: no malformed verdict settled it.
	a.waitRun(t, a.tok["acme-web"], a.waiting, inState("waiting_approval"))
}

// probeImportTooLarge: an import past the 1 MiB body limit is 413, as
// documented, whatever its shape.
func probeImportTooLarge(t *testing.T, a *attack) {
	long := strings.TrimSuffix(importLine(strings.Repeat("L", 1<<20)), "\n")
	for name, body := range map[string]string{
		"one long line": long,
		"long garbage":  strings.Repeat("{", 2<<20),
	} {
		r := a.do(t, a.url(), req{method: "POST", path: "/v1/sessions:import", body: body, ctype: "application/x-ndjson", bearer: a.tok["acme-web"]})
		if r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("an import of %s (%d bytes): %d, want 413: %.300s", name, len(body), r.status, r.body)
		}
	}
	// Just under the limit is imported: the probe can fail.
	a.must(t, a.url(), http.StatusOK, req{method: "POST", path: "/v1/sessions:import", body: importLine(strings.Repeat("S", 900<<10)),
		ctype: "application/x-ndjson", bearer: a.tok["acme-web"]})
}

// probeBadWorkflowInput: an input the workflow refuses is the caller's
// mistake, 400, not the server's 500.
func probeBadWorkflowInput(t *testing.T, a *attack) {
	for _, in := range []string{"", "not json", `{"steps":`, "\x00", `{"steps":-1}`, `{"steps":100000000}`, `{"sandbox":"docker"}`, `[]`} {
		b, _ := json.Marshal(map[string]any{"workflow": "cluster", "input": in})
		r := a.do(t, a.url(), req{method: "POST", path: "/v1/runs", body: string(b), bearer: a.tok["acme-web"]})
		if r.status != http.StatusBadRequest || errorOf(t, r.body).Error.Code != "invalid_argument" {
			t.Errorf("input %q: %d, want 400 invalid_argument: %.300s", in, r.status, r.body)
		}
	}
	for _, w := range []string{"no-such-workflow", "../cluster", ""} {
		b, _ := json.Marshal(map[string]any{"workflow": w, "input": "{}"})
		if r := a.do(t, a.url(), req{method: "POST", path: "/v1/runs", body: string(b), bearer: a.tok["acme-web"]}); r.status < 400 || r.status >= 500 {
			t.Errorf("workflow %q: %d, want a 4xx: %.300s", w, r.status, r.body)
		}
	}
}
