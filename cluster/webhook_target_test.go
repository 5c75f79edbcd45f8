package cluster_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/cluster/clusterapi"
	"github.com/openrath/rath/server"
)

// TestWebhookRefusedTarget: a worker without an allow-list does not
// deliver to a receiver on 127.0.0.1 — it receives nothing — and the
// deliveries list says only that the target is not allowed (not the
// address, not the network's error); the delivery is not retried.
func TestWebhookRefusedTarget(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		recv := newReceiver(t, func(int) int { return http.StatusOK })
		// The local operator's add is not checked early: the delivery is.
		h, err := e.cl.AddWebhook(ctx, recv.srv.URL+"/loop", []string{"done"})
		if err != nil {
			t.Fatal(err)
		}
		e.worker("a", "--webhook-backoff", "100ms")
		id := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		e.waitState(id, cluster.StateDone, 60*time.Second)
		var ds []cluster.Delivery
		e.waitFor("the delivery ended", 30*time.Second, func() bool {
			ds = deliveries(t, e, h.ID)
			return len(ds) == 1 && (ds[0].Outcome == cluster.OutcomeFailed || ds[0].Outcome == cluster.OutcomeDelivered)
		})
		if d := ds[0]; d.Outcome != cluster.OutcomeFailed || d.Error != "refused: target not allowed" || d.Status != 0 || d.Attempt != 1 {
			t.Errorf("delivery to 127.0.0.1: %+v", d)
		}
		recv.mu.Lock()
		n := len(recv.got)
		recv.mu.Unlock()
		if n != 0 {
			t.Errorf("the receiver on 127.0.0.1 got %d requests", n)
		}
	})
}

// TestWebhookTargetOverAPI: POST /v1/webhooks with a URL on loopback,
// link-local, a private range, an unspecified address, or a name that is
// not public answers 400 at once; with the operator's allow-list naming
// it, 201.
func TestWebhookTargetOverAPI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		post := func(base, url string) (int, string) {
			t.Helper()
			res, err := http.Post(base+"/v1/webhooks", "application/json", strings.NewReader(`{"url": "`+url+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		serve := func(o cluster.Options) string {
			cl, err := cluster.Open(t.Context(), e.rt, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cl.Close() })
			srv, err := server.New(e.rt.Store, server.Options{Runs: clusterapi.New(cl)})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(ts.Close)
			return ts.URL
		}
		refused := []string{
			"http://127.0.0.1:9/hook", "http://127.1/hook", "http://2130706433/hook", "http://[::1]/hook",
			"http://[::ffff:127.0.0.1]/hook", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.7/hook",
			"http://192.168.1.1/hook", "http://0.0.0.0:8080/hook", "http://metadata.google.internal/computeMetadata/v1/",
			"http://metadata/hook", "http://localhost:7474/v1/runs", "http://app.localhost/hook",
		}
		base := serve(cluster.Options{})
		for _, u := range refused {
			if status, body := post(base, u); status != http.StatusBadRequest || !strings.Contains(body, "not allowed") {
				t.Errorf("POST %s: %d %s, want 400", u, status, body)
			}
		}
		if status, body := post(base, "https://hooks.example.com/rath"); status != http.StatusCreated {
			t.Errorf("a public name: %d %s", status, body)
		}
		allowed := serve(cluster.Options{WebhookAllow: []string{"127.0.0.0/8", "localhost", "10.0.0.7"}})
		for _, u := range []string{"http://127.0.0.1:9/hook", "http://localhost:7474/hook", "http://10.0.0.7/hook"} {
			if status, body := post(allowed, u); status != http.StatusCreated {
				t.Errorf("POST %s with it allowed: %d %s, want 201", u, status, body)
			}
		}
		if status, _ := post(allowed, "http://169.254.169.254/latest/"); status != http.StatusBadRequest {
			t.Errorf("the metadata address with others allowed: %d, want 400", status)
		}
		if _, err := cluster.Open(t.Context(), e.rt, cluster.Options{WebhookAllow: []string{"not a host/"}}); err == nil {
			t.Error("a bad allow-list entry was taken")
		}
	})
}
