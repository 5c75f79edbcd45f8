package cluster_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/cluster/clusterapi"
	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
)

// TestWebhookSecretRoots: over /v1 a webhook's secret reference must lie
// inside a root the operator grants the caller's scope (--secret-root):
// a file or variable of the server outside them (/etc/shadow, HOME) is
// refused, with one message whether it exists or not. Inside a root, a
// reference that does not resolve — a missing file, a file anyone may write,
// a symbolic link leading out — reads the same in the deliveries list,
// and nothing is delivered. The webhook's creation and its secret's
// resolutions are audited as the tenant's principal, not the worker's
// user.
func TestWebhookSecretRoots(t *testing.T) {
	const key = "rath-roots-key-CANARY-7d21"
	t.Setenv("RATH_TEST_ROOTS_KEY", key)
	backends(t, func(t *testing.T, e *env) {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		open := filepath.Join(dir, "open")
		if err := os.WriteFile(open, []byte("anyone-may-replace-it"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(open, 0o666); err != nil { // unsafe whoever reads it
			t.Fatal(err)
		}
		outside := filepath.Join(t.TempDir(), "outside")
		if err := os.WriteFile(outside, []byte("not the tenant's"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		roots := []string{"default=secret://env/RATH_TEST_ROOTS_", "default/default=secret://file" + dir, "other=secret://env/HOME"}
		cl, err := cluster.Open(t.Context(), e.rt, cluster.Options{WebhookAllow: []string{"127.0.0.1"}, SecretRoots: roots})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		alog, err := audit.Open(t.Context(), e.rt.Store, audit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer alog.Close()
		srv, err := server.New(e.rt.Store, server.Options{Runs: clusterapi.New(cl), Audit: alog})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		defer ts.Close()
		var got atomic.Int32
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if cluster.VerifyWebhook(key, r.Header, body, time.Minute) == nil {
				got.Add(1)
			}
		}))
		defer recv.Close()
		post := func(ref string) (int, string) {
			t.Helper()
			body := `{"url": "` + recv.URL + `", "events": ["done"], "secret": "` + ref + `"}`
			res, err := http.Post(ts.URL+"/v1/webhooks", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var v struct {
				ID    session.ID `json:"id"`
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			b, _ := io.ReadAll(res.Body)
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("POST %s: %d %s", ref, res.StatusCode, b)
			}
			if res.StatusCode == http.StatusCreated {
				return res.StatusCode, string(v.ID)
			}
			return res.StatusCode, v.Error.Message
		}

		// Outside the roots: one answer, whether it exists or not.
		var msgs []string
		for _, ref := range []string{"secret://file/etc/shadow", "secret://file/etc/no-such-file-9f3", "secret://file/etc/passwd",
			"secret://env/HOME", "secret://env/NO_SUCH_VAR_9F3", "secret://env/RATH_TEST_ROOT", "secret://file" + dir + "-evil/k"} {
			status, msg := post(ref)
			if status != http.StatusBadRequest || !strings.Contains(msg, "secret reference not allowed or not found") {
				t.Fatalf("POST %s: %d %s, want 400", ref, status, msg)
			}
			msgs = append(msgs, msg)
		}
		for _, m := range msgs[1:] {
			if m != msgs[0] {
				t.Errorf("refusals differ: %q and %q", msgs[0], m)
			}
		}

		// Inside: added; what does not resolve is found out at delivery.
		hooks := map[string]session.ID{}
		for name, ref := range map[string]string{
			"good": "secret://env/RATH_TEST_ROOTS_KEY", "unset": "secret://env/RATH_TEST_ROOTS_UNSET",
			"missing": "secret://file" + dir + "/missing", "open": "secret://file" + open, "link": "secret://file" + dir + "/link",
		} {
			status, id := post(ref)
			if status != http.StatusCreated {
				t.Fatalf("POST %s: %d %s, want 201", ref, status, id)
			}
			hooks[name] = session.ID(id)
		}
		args := []string{"--webhook-backoff", "100ms", "--webhook-allow", "127.0.0.1"}
		for _, r := range roots {
			args = append(args, "--secret-root", r)
		}
		e.worker("a", args...)
		id := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		e.waitState(id, cluster.StateDone, 60*time.Second)
		e.waitFor("the good delivery", 30*time.Second, func() bool { return got.Load() == 1 })
		for _, name := range []string{"unset", "missing", "open", "link"} {
			var ds []cluster.Delivery
			e.waitFor("the "+name+" delivery attempted", 30*time.Second, func() bool {
				ds = deliveries(t, e, hooks[name])
				return len(ds) == 1 && ds[0].Attempt > 0 && ds[0].Error != ""
			})
			if d := ds[0]; d.Error != "signing secret: secret reference not allowed or not found" || d.Outcome == cluster.OutcomeDelivered {
				t.Errorf("%s: %+v", name, d)
			}
		}
		if n := got.Load(); n != 1 {
			t.Errorf("%d verified deliveries, want the good one only", n)
		}

		// Audited as the tenant's principal.
		var recs []audit.Record
		e.waitFor("the secret's resolution audited", 10*time.Second, func() bool {
			recs, err = audit.List(t.Context(), e.rt.Store, audit.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.Kind == audit.KindSecret && r.Resource == "secret://env/RATH_TEST_ROOTS_KEY" {
					return true
				}
			}
			return false
		})
		created := 0
		for _, r := range recs {
			switch {
			case r.Kind == audit.KindSecret && strings.Contains(r.Reason, "webhook"):
				if r.Principal != "local:local" || r.Tenant != "default" {
					t.Errorf("a webhook secret's resolution audited as %q in %q: %+v", r.Principal, r.Tenant, r)
				}
			case r.Action == "webhook.create":
				created++
				if r.Principal != "local:local" || r.Tenant != "default" {
					t.Errorf("a webhook's creation audited as %q: %+v", r.Principal, r)
				}
			}
		}
		if created != len(msgs)+len(hooks) {
			t.Errorf("%d webhook.create records, want %d", created, len(msgs)+len(hooks))
		}
	})
}
