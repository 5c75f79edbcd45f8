package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// receiver is an in-test webhook endpoint: it answers each delivery with
// answer(attempt of that delivery) and keeps what it was sent.
type receiver struct {
	srv    *httptest.Server
	answer func(attempt int) int

	mu       sync.Mutex
	attempts map[string]int // by delivery id
	got      []received
}

type received struct {
	header http.Header
	body   []byte
	status int
}

func newReceiver(t *testing.T, answer func(attempt int) int) *receiver {
	r := &receiver{answer: answer, attempts: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		id := req.Header.Get(cluster.HeaderWebhookDelivery)
		r.attempts[id]++
		status := r.answer(r.attempts[id])
		r.got = append(r.got, received{header: req.Header.Clone(), body: body, status: status})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// delivered returns the requests answered 2xx.
func (r *receiver) delivered() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, g := range r.got {
		if g.status/100 == 2 {
			out = append(out, g)
		}
	}
	return out
}

// event decodes a delivery's body, after checking its signature.
func event(t *testing.T, secret string, g received) cluster.WebhookEvent {
	t.Helper()
	if err := cluster.VerifyWebhook(secret, g.header, g.body, time.Minute); err != nil {
		t.Fatalf("delivery does not verify: %v", err)
	}
	var ev cluster.WebhookEvent
	if err := json.Unmarshal(g.body, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Event != cluster.EventRunState || ev.Run == nil || strconv.FormatInt(ev.ID, 10) != g.header.Get(cluster.HeaderWebhookDelivery) {
		t.Fatalf("delivery %s: event %+v", g.header.Get(cluster.HeaderWebhookDelivery), ev)
	}
	return ev
}

func TestWebhookSignature(t *testing.T) {
	body := []byte(`{"event":"run.state"}`)
	now := time.Now().Unix()
	h := http.Header{}
	h.Set(cluster.HeaderWebhookTimestamp, strconv.FormatInt(now, 10))
	h.Set(cluster.HeaderWebhookSignature, cluster.SignWebhook("s3cret", now, body))
	if err := cluster.VerifyWebhook("s3cret", h, body, time.Minute); err != nil {
		t.Fatal(err)
	}
	for name, check := range map[string]func() error{
		"wrong secret": func() error { return cluster.VerifyWebhook("other", h, body, time.Minute) },
		"changed body": func() error { return cluster.VerifyWebhook("s3cret", h, []byte(`{}`), time.Minute) },
		"stale": func() error {
			old := now - 3600
			s := http.Header{}
			s.Set(cluster.HeaderWebhookTimestamp, strconv.FormatInt(old, 10))
			s.Set(cluster.HeaderWebhookSignature, cluster.SignWebhook("s3cret", old, body))
			return cluster.VerifyWebhook("s3cret", s, body, time.Minute)
		},
		"unsigned": func() error { return cluster.VerifyWebhook("s3cret", http.Header{}, body, 0) },
	} {
		if err := check(); !errors.Is(err, cluster.ErrWebhookSignature) {
			t.Errorf("%s: %v, want ErrWebhookSignature", name, err)
		}
	}
}

func TestWebhooks(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		if _, err := e.cl.AddWebhook(ctx, "ftp://example.com/x", nil); !errors.Is(err, cluster.ErrBadWebhook) {
			t.Fatalf("ftp URL: %v, want ErrBadWebhook", err)
		}
		if _, err := e.cl.AddWebhook(ctx, "http://example.com/x", []string{"finished"}); !errors.Is(err, cluster.ErrBadWebhook) {
			t.Fatalf("bad event: %v, want ErrBadWebhook", err)
		}
		ok := newReceiver(t, func(int) int { return http.StatusOK })
		flaky := newReceiver(t, func(n int) int {
			if n <= 2 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		gone := newReceiver(t, func(int) int { return http.StatusGone })
		all, err := e.cl.AddWebhook(ctx, ok.srv.URL+"/all", nil)
		if err != nil {
			t.Fatal(err)
		}
		retried, err := e.cl.AddWebhook(ctx, flaky.srv.URL+"/flaky", []string{"done"})
		if err != nil {
			t.Fatal(err)
		}
		unsub, err := e.cl.AddWebhook(ctx, gone.srv.URL+"/gone", []string{"done"})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Secret) != 64 || all.Secret == retried.Secret {
			t.Fatalf("secrets %q, %q", all.Secret, retried.Secret)
		}
		hs, err := e.cl.Webhooks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 3 || hs[0].ID != all.ID || hs[0].Secret != "" || hs[1].Events[0] != "done" {
			t.Fatalf("webhooks: %+v", hs)
		}

		e.worker("a", "--webhook-backoff", "100ms", "--webhook-allow", "127.0.0.1")
		id := e.submit(`{"steps":2,"latency_ms":1,"idempotent":true}`)
		e.waitState(id, cluster.StateDone, 60*time.Second)

		// Every state, signed with the webhook's secret.
		e.waitFor("running and done delivered", 30*time.Second, func() bool {
			states := map[cluster.State]bool{}
			for _, g := range ok.delivered() {
				states[event(t, all.Secret, g).Run.State] = true
			}
			return states[cluster.StateQueued] && states[cluster.StateRunning] && states[cluster.StateDone]
		})
		for _, g := range ok.delivered() {
			if ev := event(t, all.Secret, g); ev.Run.ID != id {
				t.Errorf("delivery of run %s, want %s", ev.Run.ID, id)
			}
			if err := cluster.VerifyWebhook(retried.Secret, g.header, g.body, 0); !errors.Is(err, cluster.ErrWebhookSignature) {
				t.Errorf("another webhook's secret verifies: %v", err)
			}
		}

		// Retried after two 500s, then delivered.
		e.waitFor("the retried delivery", 30*time.Second, func() bool { return len(flaky.delivered()) == 1 })
		if ev := event(t, retried.Secret, flaky.delivered()[0]); ev.Run.State != cluster.StateDone || ev.Run.ID != id {
			t.Errorf("retried delivery: %+v", ev.Run)
		}
		var ds []cluster.Delivery
		e.waitFor("the retried delivery listed", 10*time.Second, func() bool {
			ds = deliveries(t, e, retried.ID)
			return len(ds) == 1 && ds[0].Outcome == cluster.OutcomeDelivered
		})
		if d := ds[0]; d.Attempt != 3 || d.Status != 200 || d.Run != id || d.State != "done" || d.Event != cluster.EventRunState {
			t.Errorf("retried delivery: %+v", d)
		}

		// 410 Gone unsubscribes.
		e.waitFor("the webhook answering 410 removed", 30*time.Second, func() bool {
			hs, err := e.cl.Webhooks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				if h.ID == unsub.ID {
					return false
				}
			}
			return len(hs) == 2
		})
		e.waitFor("the unsubscribing delivery listed", 10*time.Second, func() bool {
			ds = deliveries(t, e, unsub.ID)
			return len(ds) == 1 && ds[0].Outcome == cluster.OutcomeUnsubscribed
		})
		if ds[0].Status != http.StatusGone || ds[0].Attempt != 1 {
			t.Errorf("410 delivery: %+v", ds[0])
		}
		if err := e.cl.RemoveWebhook(ctx, unsub.ID); !errors.Is(err, cluster.ErrNoWebhook) {
			t.Errorf("remove an unsubscribed webhook: %v, want ErrNoWebhook", err)
		}

		// The all-events webhook's deliveries, newest first, all delivered.
		ds = deliveries(t, e, all.ID)
		if len(ds) < 3 {
			t.Fatalf("deliveries: %+v", ds)
		}
		for i, d := range ds {
			if d.Outcome != cluster.OutcomeDelivered || d.Status != 200 || (i > 0 && d.ID > ds[i-1].ID) {
				t.Errorf("delivery %d: %+v", i, d)
			}
		}

		// The CLI: add (its secret shown once), list, deliveries, remove.
		out, errOut, code := e.rath("webhooks", "add", ok.srv.URL+"/cli", "--events", "failed,done", "--json")
		var added struct {
			ID     session.ID `json:"id"`
			Secret string     `json:"secret"`
			Events []string   `json:"events"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &added) != nil || len(added.Secret) != 64 || len(added.Events) != 2 {
			t.Fatalf("webhooks add: exit %d: %s%s", code, out, errOut)
		}
		if _, errOut, code := e.rath("webhooks", "rm", string(all.ID)); code != 0 {
			t.Fatalf("webhooks rm: exit %d: %s", code, errOut)
		}
		if _, _, code := e.rath("webhooks", "rm", string(all.ID)); code == 0 {
			t.Errorf("webhooks rm of a removed webhook succeeded")
		}
		out, _, code = e.rath("webhooks", "ls", "--json")
		var listed []cluster.Webhook
		if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 2 || listed[0].ID != retried.ID || listed[1].ID != added.ID {
			t.Fatalf("webhooks ls: exit %d: %s", code, out)
		}
		if strings.Contains(out, added.Secret) {
			t.Errorf("webhooks ls shows a secret: %s", out)
		}
		out, _, code = e.rath("webhooks", "deliveries", string(retried.ID))
		if code != 0 || !strings.Contains(out, "delivered") || !strings.Contains(out, string(id)) {
			t.Errorf("webhooks deliveries: exit %d: %s", code, out)
		}
	})
}

func deliveries(t *testing.T, e *env, id session.ID) []cluster.Delivery {
	t.Helper()
	ds, err := e.cl.Deliveries(context.Background(), id, 100)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// A webhook added with a secret reference: the store keeps the
// reference, never the value; the worker resolves it and signs with the
// value; a value or a malformed reference is refused.
func TestWebhookSecretReference(t *testing.T) {
	const key = "rath-secret-WEBHOOK-e81b07"
	t.Setenv("RATH_TEST_WEBHOOK_KEY", key) // the workers inherit it
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		for _, bad := range []string{key, "secret:env/X", "secret://env/"} {
			if _, err := e.cl.AddWebhookWith(ctx, "http://example.com/x", nil, cluster.WebhookOptions{Secret: bad}); !errors.Is(err, cluster.ErrBadWebhook) || strings.Contains(err.Error(), key) {
				t.Fatalf("secret %q: %v, want ErrBadWebhook", bad, err)
			}
		}
		ok := newReceiver(t, func(int) int { return http.StatusOK })
		h, err := e.cl.AddWebhookWith(ctx, ok.srv.URL+"/ref", []string{"done"}, cluster.WebhookOptions{Secret: "secret://env/RATH_TEST_WEBHOOK_KEY"})
		if err != nil {
			t.Fatal(err)
		}
		if h.Secret != "" || h.SecretRef != "secret://env/RATH_TEST_WEBHOOK_KEY" {
			t.Fatalf("added %+v", h)
		}
		info, err := e.rt.Store.Info(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range info.Labels {
			if strings.Contains(v, key) {
				t.Fatalf("label %s holds the value: %s", k, v)
			}
		}
		if info.Labels[cluster.LabelWebhookSecret] != h.SecretRef {
			t.Fatalf("secret label %q", info.Labels[cluster.LabelWebhookSecret])
		}
		hs, err := e.cl.Webhooks(ctx)
		if err != nil || len(hs) != 1 || hs[0].SecretRef != h.SecretRef || hs[0].Secret != "" {
			t.Fatalf("webhooks: %+v, %v", hs, err)
		}

		e.worker("a", "--webhook-backoff", "100ms", "--webhook-allow", "127.0.0.1")
		id := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		e.waitState(id, cluster.StateDone, 60*time.Second)
		e.waitFor("the done delivery", 30*time.Second, func() bool { return len(ok.delivered()) == 1 })
		if ev := event(t, key, ok.delivered()[0]); ev.Run.ID != id || ev.Run.State != cluster.StateDone {
			t.Errorf("delivery: %+v", ev.Run)
		}
		if err := e.cl.RemoveWebhook(ctx, h.ID); err != nil {
			t.Fatal(err)
		}
	})
}
