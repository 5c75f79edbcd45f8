package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/client"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// serve starts `rath serve` on a free loopback port with args, and waits
// until it is ready; it returns its base URL.
func (e *env) serve(name string, args ...string) string {
	e.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := e.start(rathBin, name, append([]string{"serve", "--addr", addr}, args...)...)
	base := "http://" + addr
	e.waitFor("rath serve "+name+" ready", 30*time.Second, func() bool {
		select {
		case err := <-p.done:
			p.done <- err
			e.t.Fatalf("rath serve %s exited: %v\n%s", name, err, p.out.String())
		default:
		}
		res, err := http.Get(base + "/health/ready")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return base
}

// rawCall makes one request and returns its status and error code.
func rawCall(t *testing.T, method, url, ctype string, body io.Reader, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&e)
	if res.Header.Get("X-Request-ID") == "" {
		t.Fatalf("%s %s: no X-Request-ID", method, url)
	}
	return res.StatusCode, e.Error.Code
}

// waitRun polls the API until run id is in state.
func waitRun(t *testing.T, c *client.Client, id session.ID, state string) *client.Run {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := c.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == state {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s (%s), not %s, after a minute", id, r.State, r.Error, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The Agent Server's contract, over the real binaries: `rath serve` and
// `rath worker` processes on one store. The same Idempotency-Key and body
// give the same run and another body 409; a run cancelled while a worker
// runs it is resumed and ends done with no effect twice; runs page; and
// every error code is reached.
func TestAPIContract(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		base := e.serve("api")
		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		e.worker("a")

		in := `{"steps":2,"latency_ms":1,"idempotent":true}`
		first, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &in, Key: "contract-1"})
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &in, Key: "contract-1"})
		if err != nil || again.ID != first.ID {
			t.Fatalf("the same key and body: %v %v, want %s", again, err, first.ID)
		}
		// An input the workflow refuses is the caller's to fix: 400, not
		// 500, whatever is wrong with it.
		for _, bad := range []string{"", "{", "\x00", `{"steps":-1}`, `{"steps":1,"sandbox":"docker"}`} {
			_, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &bad})
			var ce *client.Error
			if !errors.Is(err, client.ErrInvalidArgument) || !errors.As(err, &ce) || ce.Status != http.StatusBadRequest {
				t.Fatalf("input %q: %v, want 400 invalid_argument", bad, err)
			}
		}
		for _, needs := range []map[string]string{{"a b": "x"}, {"gpu": "1,region=eu"}, {"gpu": "\x00"}} {
			_, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &in, Needs: needs})
			if !errors.Is(err, client.ErrInvalidArgument) {
				t.Fatalf("needs %q: %v, want 400 invalid_argument", needs, err)
			}
		}
		other := `{"steps":3,"latency_ms":1,"idempotent":true}`
		if _, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &other, Key: "contract-1"}); !errors.Is(err, client.ErrConflict) {
			t.Fatalf("the same key with another body: %v", err)
		}
		waitRun(t, c, first.ID, "done")
		e.exactlyOnce(first.ID, 2)

		// Cancel a run mid-way, then resume it: it finishes from its
		// committed steps.
		const steps = 8
		slow := fmt.Sprintf(`{"steps":%d,"latency_ms":150,"idempotent":false}`, steps)
		run, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &slow})
		if err != nil {
			t.Fatal(err)
		}
		e.waitFor("two effects", 30*time.Second, func() bool { return e.effectsOf(run.ID) >= 2 })
		if r, err := c.CancelRun(ctx, run.ID, "ana", "wrong input"); err != nil || (r.State != "cancelling" && r.State != "cancelled") {
			t.Fatalf("cancel: %+v %v", r, err)
		}
		waitRun(t, c, run.ID, "cancelled")
		if _, err := c.CancelRun(ctx, run.ID, "ana", ""); !errors.Is(err, client.ErrConflict) {
			t.Fatalf("a cancel of a cancelled run: %v", err)
		}
		if r, err := c.ResumeRun(ctx, run.ID, "ana", "it was right"); err != nil || r.Final() {
			t.Fatalf("resume: %+v %v", r, err)
		}
		waitRun(t, c, run.ID, "done")
		e.exactlyOnce(run.ID, steps)
		if _, err := c.ResumeRun(ctx, run.ID, "ana", ""); !errors.Is(err, client.ErrConflict) {
			t.Fatalf("a resume of a done run: %v", err)
		}

		// Pages of one run each, newest first, as the cluster lists them.
		third, err := c.SubmitRun(ctx, client.RunRequest{Workflow: "cluster", Input: &in})
		if err != nil {
			t.Fatal(err)
		}
		want := []session.ID{third.ID, run.ID, first.ID}
		var got []session.ID
		cursor := ""
		for range 10 {
			var page struct {
				Items []struct {
					ID session.ID `json:"id"`
				} `json:"items"`
				NextCursor string `json:"next_cursor"`
			}
			res, err := http.Get(base + "/v1/runs?limit=1&workflow=cluster&cursor=" + cursor)
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(res.Body).Decode(&page)
			res.Body.Close()
			if err != nil || len(page.Items) != 1 {
				t.Fatalf("a page: %+v %v", page, err)
			}
			got = append(got, page.Items[0].ID)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("paged %v, want %v", got, want)
		}

		// Every code.
		for _, tc := range []struct {
			method, path, ctype string
			body                string
			header              []string
			status              int
			code                string
		}{
			{"POST", "/v1/runs", "application/json", `{}`, nil, 400, "invalid_argument"},
			{"POST", "/v1/runs", "application/json", `{"workflow": "nope"}`, nil, 400, "invalid_argument"},
			{"POST", "/v1/runs", "application/json", `{"workflow": "cluster", "input": "` + strings.Repeat("x", 2<<20) + `"}`, nil, 413, "invalid_argument"},
			{"POST", "/v1/runs", "text/plain", `{"workflow": "cluster"}`, nil, 415, "invalid_argument"},
			{"DELETE", "/v1/runs", "", "", nil, 405, "invalid_argument"},
			{"GET", "/v1/runs/" + string(session.NewID()), "", "", nil, 404, "not_found"},
			{"POST", "/v1/approvals/" + string(first.ID), "application/json", `{"verdict": "approve", "by": "ana"}`, nil, 409, "conflict"},
			{"GET", "/v1/runs", "", "", []string{"Host", "rath.example.com"}, 403, "forbidden"},
			{"POST", "/v1/runs", "application/json", `{"workflow": "cluster", "session": "` + string(session.NewID()) + `"}`, nil, 404, "not_found"},
		} {
			status, code := rawCall(t, tc.method, base+tc.path, tc.ctype, strings.NewReader(tc.body), tc.header...)
			if status != tc.status || code != tc.code {
				t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, status, code, tc.status, tc.code)
			}
		}

		// The cluster's metrics: three runs done, one worker alive, the
		// pool it serves.
		waitRun(t, c, third.ID, "done")
		res, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		scraped, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, line := range []string{`rath_cluster_runs{state="done"} 3`, `rath_cluster_workers{alive="true"} 1`, `rath_cluster_queue_runs{queue=`, `rath_cluster_queue_age_seconds{queue=`, `rath_cluster_scrape_errors 0`} {
			if !strings.Contains(string(scraped), line) {
				t.Fatalf("GET /metrics has no %q:\n%s", line, scraped)
			}
		}

		// A server with a token and a cap of one waiting run.
		capped := e.serve("capped", "--token", "s3cret", "--max-queued", "1")
		if status, code := rawCall(t, "GET", capped+"/v1/runs", "", nil); status != 401 || code != "unauthenticated" {
			t.Fatalf("no token: %d %s", status, code)
		}
		mars := `{"workflow": "cluster", "input": ` + fmt.Sprintf("%q", in) + `, "needs": {"region": "mars"}}`
		auth := []string{"Authorization", "Bearer s3cret"}
		if status, code := rawCall(t, "POST", capped+"/v1/runs", "application/json", strings.NewReader(mars), auth...); status != 201 {
			t.Fatalf("a run no worker admits: %d %s", status, code)
		}
		if status, code := rawCall(t, "POST", capped+"/v1/runs", "application/json", strings.NewReader(mars), auth...); status != 429 || code != "exhausted" {
			t.Fatalf("past the cap: %d %s", status, code)
		}
		if n, err := e.cl.Queued(ctx, nil); err != nil || n != 1 {
			t.Fatalf("queued %d %v: the refused run was made", n, err)
		}

		// A server without a cluster.
		bare := e.serve("bare", "--no-cluster")
		if status, code := rawCall(t, "GET", bare+"/v1/runs", "", nil); status != 503 || code != "unavailable" {
			t.Fatalf("no cluster: %d %s", status, code)
		}
		if status, _ := rawCall(t, "GET", bare+"/v1/sessions/"+string(first.ID), "", &bytes.Buffer{}); status != 200 {
			t.Fatalf("a session from a server without a cluster: %d", status)
		}
	})
}

// `rath serve --worker` works runs in its own process, and its /metrics
// count what they commit beside the cluster's state.
func TestServeWithWorker(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		base := e.serve("api", "--worker")
		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		in := `{"steps":2,"latency_ms":1,"idempotent":true}`
		run, err := c.SubmitRun(context.Background(), client.RunRequest{Workflow: "cluster", Input: &in})
		if err != nil {
			t.Fatal(err)
		}
		waitRun(t, c, run.ID, "done")
		e.exactlyOnce(run.ID, 2)
		res, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		scraped, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, want := range []string{"rath_tool_results_total 2", `rath_cluster_runs{state="done"} 1`, `rath_cluster_workers{alive="true"} 1`} {
			if !strings.Contains(string(scraped), want) {
				t.Fatalf("/metrics has no %q:\n%s", want, scraped)
			}
		}
	})
}

// A schedule added through the API fires on the cluster's workers; it is
// listed with its last run, and removed.
func TestSchedulesOverAPI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		base := e.serve("api")
		c, err := client.New(base)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		e.worker("a")
		in := `{"steps":1,"latency_ms":1,"idempotent":true}`
		if _, err := c.AddSchedule(ctx, client.Schedule{Name: "every-second", Workflow: "cluster", Cron: "* * * * * *", Input: &in}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddSchedule(ctx, client.Schedule{Name: "every-second", Workflow: "cluster", Cron: "* * * * * *", Input: &in}); !errors.Is(err, client.ErrConflict) {
			t.Fatalf("the same name again: %v", err)
		}
		if _, err := c.AddSchedule(ctx, client.Schedule{Name: "bad", Workflow: "cluster", Cron: "not cron"}); !errors.Is(err, client.ErrInvalidArgument) {
			t.Fatalf("a bad expression: %v", err)
		}
		var last session.ID
		e.waitFor("a scheduled run", 30*time.Second, func() bool {
			ss, err := c.Schedules(ctx)
			if err != nil || len(ss) != 1 {
				t.Fatalf("schedules: %+v %v", ss, err)
			}
			last = ss[0].LastRun
			return last != ""
		})
		waitRun(t, c, last, "done")
		if err := c.RemoveSchedule(ctx, "every-second"); err != nil {
			t.Fatal(err)
		}
		if err := c.RemoveSchedule(ctx, "every-second"); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("removed twice: %v", err)
		}
	})
}

// A webhook added through the API gets a run's state changes, signed with
// the secret the API answered once; its deliveries are listed; it is
// removed.
func TestWebhooksOverAPI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		base := e.serve("api", "--webhook-allow", "127.0.0.1")
		var mu sync.Mutex
		var states []string
		var bad error
		var secret string
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			if err := cluster.VerifyWebhook(secret, r.Header, body, time.Minute); err != nil {
				bad = err
			}
			var ev cluster.WebhookEvent
			_ = json.Unmarshal(body, &ev)
			if ev.Run != nil {
				states = append(states, string(ev.Run.State))
			}
		}))
		defer recv.Close()
		var added struct {
			ID     session.ID `json:"id"`
			Secret string     `json:"secret"`
		}
		mu.Lock()
		res, err := http.Post(base+"/v1/webhooks", "application/json", strings.NewReader(`{"url": "`+recv.URL+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusCreated || json.NewDecoder(res.Body).Decode(&added) != nil || added.Secret == "" {
			t.Fatalf("POST /v1/webhooks: %d %+v", res.StatusCode, added)
		}
		res.Body.Close()
		secret = added.Secret
		mu.Unlock()

		e.worker("a", "--webhook-allow", "127.0.0.1")
		id := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		e.waitState(id, cluster.StateDone, 30*time.Second)
		e.waitFor("the done delivery", 30*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return slices.Contains(states, "done")
		})
		mu.Lock()
		if bad != nil {
			t.Fatalf("a delivery's signature: %v", bad)
		}
		mu.Unlock()
		var ds struct {
			Items []cluster.Delivery `json:"items"`
		}
		res, err = http.Get(base + "/v1/webhooks/" + string(added.ID) + "/deliveries")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.NewDecoder(res.Body).Decode(&ds); err != nil || len(ds.Items) == 0 {
			t.Fatalf("deliveries: %+v %v", ds, err)
		}
		res.Body.Close()
		if status, _ := rawCall(t, "DELETE", base+"/v1/webhooks/"+string(added.ID), "", nil); status != http.StatusNoContent {
			t.Fatalf("DELETE: %d", status)
		}
		if status, code := rawCall(t, "DELETE", base+"/v1/webhooks/"+string(added.ID), "", nil); status != 404 || code != "not_found" {
			t.Fatalf("DELETE again: %d %s", status, code)
		}
	})
}
