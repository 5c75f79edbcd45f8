package cluster_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/cluster/clusterapi"
	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
)

// TestWebhookSecretReferenceOverAPI: POST /v1/webhooks with a secret
// reference keeps the reference, never the key (a literal key is refused);
// the worker resolves it as it delivers, and the receiver verifies the
// signature with the key.
func TestWebhookSecretReferenceOverAPI(t *testing.T) {
	const key = "rath-hook-key-CANARY-51f0"
	t.Setenv("RATH_TEST_HOOK_KEY", key)
	backends(t, func(t *testing.T, e *env) {
		// The receiver is on loopback, and the key in a variable: the
		// operator allows both.
		cl, err := cluster.Open(t.Context(), e.rt, cluster.Options{WebhookAllow: []string{"127.0.0.1"}, SecretRoots: []string{"default=secret://env/RATH_TEST_HOOK_"}})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		srv, err := server.New(e.rt.Store, server.Options{Runs: clusterapi.New(cl)})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		defer ts.Close()
		var mu sync.Mutex
		verified, bad := 0, error(nil)
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			if err := cluster.VerifyWebhook(key, r.Header, body, time.Minute); err != nil {
				bad = err
				return
			}
			verified++
		}))
		defer recv.Close()
		post := func(body string) (int, string) {
			res, err := http.Post(ts.URL+"/v1/webhooks", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		if status, body := post(`{"url": "` + recv.URL + `", "secret": "` + key + `"}`); status != http.StatusBadRequest || strings.Contains(body, key) {
			t.Fatalf("a literal key: %d %s", status, body)
		}
		status, body := post(`{"url": "` + recv.URL + `", "events": ["done"], "secret": "secret://env/RATH_TEST_HOOK_KEY"}`)
		var added struct {
			ID        session.ID `json:"id"`
			Secret    string     `json:"secret"`
			SecretRef string     `json:"secret_ref"`
		}
		if status != http.StatusCreated || json.Unmarshal([]byte(body), &added) != nil || added.Secret != "" || added.SecretRef != "secret://env/RATH_TEST_HOOK_KEY" {
			t.Fatalf("POST /v1/webhooks with a reference: %d %s", status, body)
		}
		info, err := e.rt.Store.Info(t.Context(), added.ID)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range info.Labels {
			if strings.Contains(v, key) {
				t.Fatalf("the store holds the key in label %s", k)
			}
		}
		e.worker("a", "--webhook-allow", "127.0.0.1", "--secret-root", "default=secret://env/RATH_TEST_HOOK_")
		id := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		e.waitState(id, cluster.StateDone, 30*time.Second)
		e.waitFor("a delivery signed with the referenced key", 30*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			if bad != nil {
				t.Fatalf("a delivery failed verification: %v", bad)
			}
			return verified > 0
		})
	})
}
