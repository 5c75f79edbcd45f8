package attack

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// probeWebhookTargets: a tenant's webhook may not point the workers at
// the operator's network: loopback, private, link-local (the metadata
// services), unspecified and names that are not public are refused as
// the webhook is added, and none is listed.
func probeWebhookTargets(t *testing.T, a *attack) {
	own := a.tok["acme-web"]
	refused := []string{
		"http://127.0.0.1:" + strings.TrimPrefix(a.url()[strings.LastIndex(a.url(), ":"):], ":") + "/v1/sessions",
		"http://127.0.0.2/", "http://[::1]/", "http://0.0.0.0/", "http://[::]/",
		"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/",
		"http://10.0.0.1/", "http://172.16.5.4/", "http://192.168.1.1/", "http://100.64.0.1/", "http://[fc00::1]/",
		"http://[::ffff:127.0.0.1]/", "http://[::ffff:169.254.169.254]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:7f00:1::]/",
		"http://localhost/", "http://rath.localhost/", "http://metadata/", "http://metadata.google.internal/computeMetadata/v1/",
		"http://metadata.goog/", "http://printer.local/", "http://nas.home.arpa/", "http://127.1/", "http://2130706433/",
		"http://0x7f.0.0.1/", "http://224.0.0.1/",
	}
	for _, u := range refused {
		b, _ := json.Marshal(map[string]string{"url": u})
		r := a.do(t, a.url(), req{method: "POST", path: "/v1/webhooks", body: string(b), bearer: own})
		if r.status != http.StatusBadRequest {
			t.Errorf("a webhook to %s: %d, want 400: %.300s", u, r.status, r.body)
		}
	}
	list := a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/webhooks", bearer: own})
	for _, host := range []string{"127.0.0", "169.254", "metadata", "192.168", "[::1]", "localhost"} {
		if strings.Contains(list, host) {
			t.Errorf("a refused webhook is listed (%s): %.500s", host, list)
		}
	}
	// A public address (TEST-NET-1, never routed) is taken: the probe
	// can fail. Removed at once, so that nothing is delivered to it.
	var hook struct{ ID, Secret string }
	body := a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/webhooks", body: `{"url":"https://192.0.2.14/acme-public"}`, bearer: own})
	decode(t, body, &hook)
	a.secrets = append(a.secrets, hook.Secret)
	a.handed[hook.Secret] = body
	if r := a.do(t, a.url(), req{method: "DELETE", path: "/v1/webhooks/" + hook.ID, bearer: own}); r.status >= 300 {
		t.Errorf("DELETE /v1/webhooks/%s: %d: %.300s", hook.ID, r.status, r.body)
	}
}

// probeWebhookConnectTime: a webhook the operator adds from the command
// line is checked as it is delivered, not as it is added: a delivery to a
// receiver on loopback is refused as it connects, the receiver hears
// nothing, and the deliveries list says only "refused".
func probeWebhookConnectTime(t *testing.T, a *attack) {
	var hits atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer rcv.Close()
	var hook struct{ ID string }
	decode(t, a.mustCLI(t, "--json", "webhooks", "add", rcv.URL+"/hook", "--events", "done,failed"), &hook)
	if hook.ID == "" {
		t.Fatal("rath webhooks add printed no id")
	}
	id := a.submit(t, a.tok["operator"], "cluster", `{"steps":1,"latency_ms":1,"idempotent":true}`)
	a.waitRun(t, a.tok["operator"], id, inState("done"))
	var ds []struct {
		State, Error, Outcome string
		Status                int
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		decode(t, a.mustCLI(t, "--json", "webhooks", "deliveries", hook.ID), &ds)
		if len(ds) > 0 && ds[0].Outcome != "" && ds[0].Outcome != "pending" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery to loopback did not end: %+v", ds)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the receiver on loopback got %d deliveries", n)
	}
	shown, _ := json.Marshal(ds)
	if !strings.Contains(string(shown), "refused") || strings.Contains(string(shown), rcv.Listener.Addr().String()) {
		t.Errorf("the deliveries list: %s", shown)
	}
}

// probeWebhookSecretRoots: a tenant may sign its webhooks only with the
// secrets under the roots the operator granted it; every other
// reference — another tenant's file, the operator's, /etc, environment
// variables set or not — is refused with the same answer.
func probeWebhookSecretRoots(t *testing.T, a *attack) {
	own := filepath.Join(a.secdir, "acme", "hook.key")
	outside := []string{
		"secret://file/etc/passwd", "secret://file/etc/hostname", "secret://file/nope/nothing",
		"secret://file" + filepath.Join(a.secdir, "globex", "hook.key"), "secret://file" + filepath.Join(a.secdir, "operator.key"),
		"secret://file" + filepath.Join(a.secdir, "acme-other", "hook.key"),
		"secret://file" + a.home + "/webhook.key", "secret://env/HOME", "secret://env/PATH", "secret://env/ACME_NOT_SET_EVER",
		"secret://vault/acme/hook",
	}
	add := func(bearer, ref string) resp {
		b, _ := json.Marshal(map[string]string{"url": "https://hooks.attack.invalid/signed", "secret": ref})
		return a.do(t, a.url(), req{method: "POST", path: "/v1/webhooks", body: string(b), bearer: bearer})
	}
	first := ""
	check := func(who, ref string, r resp) {
		t.Helper()
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: secret %s: %d, want 400: %.300s", who, ref, r.status, r.body)
			return
		}
		msg := strings.ReplaceAll(errorOf(t, r.body).Error.Message, ref, "REF")
		if first == "" {
			first = msg
		}
		if msg != first {
			t.Errorf("%s: secret %s answers %q, another %q: the answer tells them apart", who, ref, msg, first)
		}
		if strings.Contains(msg, a.secdir) || strings.Contains(msg, "no such file") || strings.Contains(msg, "permission") {
			t.Errorf("%s: secret %s: the answer tells of the server: %q", who, ref, msg)
		}
	}
	for _, ref := range outside {
		check("acme", ref, add(a.tok["acme-web"], ref))
	}
	check("globex", "secret://file"+own, add(a.tok["globex-admin"], "secret://file"+own))
	// A path not written plainly is refused for its form alone, the
	// same whether what it names exists or not.
	var forms []string
	for _, name := range []string{"operator.key", "nothing.key"} {
		ref := "secret://file" + filepath.Join(a.secdir, "acme") + "/../" + name
		r := add(a.tok["acme-web"], ref)
		if r.status != http.StatusBadRequest {
			t.Errorf("acme: secret %s: %d, want 400: %.300s", ref, r.status, r.body)
		}
		forms = append(forms, strings.ReplaceAll(errorOf(t, r.body).Error.Message, name, "NAME"))
	}
	if forms[0] != forms[1] {
		t.Errorf("a reference through .. tells whether its file exists: %q, %q", forms[0], forms[1])
	}
	// Its own root's file is taken: the probe can fail.
	if r := add(a.tok["acme-web"], "secret://file"+own); r.status != http.StatusCreated {
		t.Errorf("acme: its own secret: %d, want 201: %.300s", r.status, r.body)
	}
}

// probeWebhookURLCredentials: a receiver's credentials in a webhook's
// URL are delivered, never listed, and sealed at rest (the secret scan
// looks for them in the store).
func probeWebhookURLCredentials(t *testing.T, a *attack) {
	const pass, lone = "pa55-CANARY-7d1e", "tok-CANARY-99e1f"
	a.secrets = append(a.secrets, pass, lone)
	own := a.tok["acme-web"]
	for _, u := range []string{"https://alice:" + pass + "@hooks.attack.invalid/basic", "https://" + lone + "@hooks.attack.invalid/lone"} {
		b, _ := json.Marshal(map[string]string{"url": u})
		body := a.must(t, a.url(), http.StatusCreated, req{method: "POST", path: "/v1/webhooks", body: string(b), bearer: own})
		if strings.Contains(body, pass) || strings.Contains(body, lone) {
			t.Errorf("POST /v1/webhooks shows the URL's credential: %s", body)
		}
		var hook struct{ Secret string }
		decode(t, body, &hook)
		a.secrets = append(a.secrets, hook.Secret)
		a.handed[hook.Secret] = body
	}
	list := a.must(t, a.url(), http.StatusOK, req{method: "GET", path: "/v1/webhooks", bearer: own})
	if strings.Contains(list, pass) || strings.Contains(list, lone) || !strings.Contains(list, "xxxxx") {
		t.Errorf("GET /v1/webhooks: %s", list)
	}
	if out, _, _ := a.cli(t, "webhooks", "ls"); strings.Contains(out, pass) || strings.Contains(out, lone) {
		t.Errorf("rath webhooks ls shows a URL's credential: %s", out)
	}
	fi, err := os.Stat(filepath.Join(a.home, "webhook.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the key webhooks are sealed with: %v %v", fi, err)
	}
}
