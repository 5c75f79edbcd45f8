package cluster_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
)

// River's own UI serves its page and its API over the cluster's queues:
// a submitted run's job is there, in its pool's queue.
func TestRiverUI(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("w", "--offers", "ui=1")
		in := `{"steps":1,"latency_ms":1,"idempotent":true}`
		id, err := e.cl.Submit(context.Background(), "cluster", cluster.SubmitOptions{Input: &in, Needs: map[string]string{"ui": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		r := e.waitState(id, cluster.StateDone, 30*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h, err := e.cl.RiverUI(ctx, "/river")
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		get := func(path string) (int, string) {
			t.Helper()
			res, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		if code, body := get("/river/"); code != http.StatusOK || !strings.Contains(strings.ToLower(body), "<html") {
			t.Fatalf("GET /river/: %d\n%.300s", code, body)
		}
		// River writes a job's completion a moment after its run is done.
		found := false
		var body string
		e.waitFor("the run's job among River's completed jobs", 15*time.Second, func() bool {
			var code int
			code, body = get("/river/api/jobs?state=completed&limit=20")
			if code != http.StatusOK {
				t.Fatalf("GET /river/api/jobs: %d\n%.300s", code, body)
			}
			var jobs struct {
				Data []struct {
					Queue string          `json:"queue"`
					Args  json.RawMessage `json:"args"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(body), &jobs); err != nil {
				t.Fatalf("jobs: %v\n%.300s", err, body)
			}
			for _, j := range jobs.Data {
				if j.Queue == r.Pool && strings.Contains(string(j.Args), string(id)) {
					found = true
				}
			}
			return found
		})
		if !found {
			t.Fatalf("the run's job (queue %s) is not among River's completed jobs:\n%.500s", r.Pool, body)
		}
	})
}
