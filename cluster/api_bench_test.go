package cluster_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/cluster/clusterapi"
	"github.com/openrath/rath/server"
)

// BenchmarkAPICreateRun: runs created per second through POST /v1/runs,
// each with its own Idempotency-Key (as the Go client sends), from eight
// concurrent clients, on each store; a worker process is alive (so runs
// are routed and enqueued, on PostgreSQL in the input's transaction) and
// works them meanwhile.
func BenchmarkAPICreateRun(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			home := b.TempDir()
			e := newEnvWith(b, home, storeURL(b, backend, home), cluster.Options{})
			e.defaultWorker("w", "--concurrency", "4")
			srv, err := server.New(e.rt.Store, server.Options{Runs: clusterapi.New(e.cl), MaxQueuedRuns: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			defer ts.Close()
			body := `{"workflow": "cluster", "input": "{\"steps\":1,\"latency_ms\":1,\"idempotent\":true}"}`
			var key atomic.Int64
			b.SetParallelism(4) // 8 clients on 2 cores
			t0 := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("POST", ts.URL+"/v1/runs", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", fmt.Sprint("bench-", key.Add(1)))
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					res.Body.Close()
					if res.StatusCode != http.StatusCreated {
						b.Errorf("POST /v1/runs: %d", res.StatusCode)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "runs/s")
		})
	}
}
