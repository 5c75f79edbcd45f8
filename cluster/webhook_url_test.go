package cluster_test

import (
	"context"
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

// TestWebhookURLCredentials: a webhook URL's password (or a user name
// alone, often a token) is in no listing — the Go API's, /v1's answers,
// `rath webhooks ls`, the webhook's session — yet its deliveries still
// send it to the receiver.
func TestWebhookURLCredentials(t *testing.T) {
	const pass, token, pass2 = "pa55-CANARY-u1", "tok-CANARY-u2", "s3cr3t-CANARY-u3"
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		var mu sync.Mutex
		var auths []string
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			if u, p, ok := r.BasicAuth(); ok {
				auths = append(auths, u+":"+p)
			}
		}))
		defer recv.Close()
		local := strings.Replace(recv.URL, "http://", "http://alice:"+pass+"@", 1) + "/hook"
		h, err := e.cl.AddWebhook(ctx, local, []string{"done"})
		if err != nil {
			t.Fatal(err)
		}
		var shown []string
		show := func(what, s string) { shown = append(shown, what+": "+s) }
		show("AddWebhook", h.URL)
		hs, err := e.cl.Webhooks(ctx)
		if err != nil || len(hs) != 1 {
			t.Fatalf("webhooks: %+v %v", hs, err)
		}
		show("Webhooks", hs[0].URL)
		if !strings.Contains(hs[0].URL, "alice:xxxxx@127.0.0.1") {
			t.Errorf("listed as %s, want its user and a redacted password", hs[0].URL)
		}
		for _, args := range [][]string{{"webhooks", "ls"}, {"webhooks", "ls", "--json"}} {
			out, errOut, code := e.rath(args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut)
			}
			show(strings.Join(args, " "), out+errOut)
		}
		out, errOut, code := e.rath("webhooks", "add", "https://"+token+"@hooks.example.com/cli")
		if code != 0 {
			t.Fatalf("webhooks add: exit %d: %s", code, errOut)
		}
		show("webhooks add", out+errOut)
		ses, err := e.rt.Store.Load(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range ses.Chunks() {
			if ch.Note != nil {
				show("its session's note", ch.Note.Text)
			}
		}

		cl, err := cluster.Open(t.Context(), e.rt, cluster.Options{})
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
		call := func(method, path, body string) string {
			t.Helper()
			req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode >= 300 {
				t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
			}
			return string(b)
		}
		added := call("POST", "/v1/webhooks", `{"url": "https://bob:`+pass2+`@hooks.example.com/api"}`)
		show("POST /v1/webhooks", added)
		show("GET /v1/webhooks", call("GET", "/v1/webhooks", ""))
		var a struct {
			ID session.ID `json:"id"`
		}
		if err := json.Unmarshal([]byte(added), &a); err != nil {
			t.Fatal(err)
		}
		for _, s := range shown {
			if strings.Contains(s, pass) || strings.Contains(s, token) || strings.Contains(s, pass2) {
				t.Errorf("%s shows a credential", s)
			}
		}

		e.worker("a", "--webhook-allow", "127.0.0.1")
		id := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		e.waitState(id, cluster.StateDone, 60*time.Second)
		e.waitFor("the delivery with its credentials", 30*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(auths) > 0
		})
		mu.Lock()
		defer mu.Unlock()
		if auths[0] != "alice:"+pass {
			t.Errorf("the receiver got basic auth %q", auths[0])
		}
	})
}
