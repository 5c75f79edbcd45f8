package attack

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

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
