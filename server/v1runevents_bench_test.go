package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

// BenchmarkSSEFanoutRun: subscribers (1,000, or RATH_SSE_SUBSCRIBERS)
// follow one busy run's /v1 event stream while its agent's session commits
// 100 chunks, one every 5 ms; reports p50 and p99 of the time from a
// commit's return to its event at each subscriber.
func BenchmarkSSEFanoutRun(b *testing.B) {
	subs := 1000
	if n, err := strconv.Atoi(os.Getenv("RATH_SSE_SUBSCRIBERS")); err == nil && n > 0 {
		subs = n
	}
	const commits = 100
	st := openStore(b)
	in := session.FromUser("busy")
	commit(b, st, in, "")
	agent := in.Fork().Append(session.Assistant("working"))
	commit(b, st, agent, "")
	if err := st.SetLabel(context.Background(), agent.ID(), "rath.run", string(in.ID())); err != nil {
		b.Fatal(err)
	}
	runs := &v1FakeRuns{st: st, runs: []*v1FakeRun{{ID: in.ID(), Workflow: "w", State: "running", Created: time.Now().UTC()}}}
	_, ts := newTestServer(b, st, Options{Runs: runs, MaxSubscribers: int64(subs), MaxSubscribersPerTenant: int64(subs), MaxSubscribersPerPrincipal: int64(subs)})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: subs}}
	url := ts.URL + "/v1/runs/" + string(in.ID()) + "/events"
	var lat []time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		first := agent.Len()
		committed := make([]time.Time, commits)
		got := make([][]time.Time, subs)
		var ready, done sync.WaitGroup
		for k := range subs {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				got[k] = follow(ctx, b, hc, url, "", first, commits, &ready, runIndex)
			}()
		}
		ready.Wait()
		for i := range commits {
			prev := agent.Head()
			agent = agent.Append(session.Assistant(fmt.Sprint("turn ", i)))
			commit(b, st, agent, prev)
			committed[i] = time.Now()
			time.Sleep(5 * time.Millisecond)
		}
		done.Wait()
		cancel()
		for _, g := range got {
			for i, at := range g {
				if at.IsZero() {
					b.Fatalf("a subscriber missed chunk %d", first+i)
				}
				lat = append(lat, max(0, at.Sub(committed[i])))
			}
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// runIndex reads a run stream's chunk index from its data line.
func runIndex(line string) (int, bool) {
	if !strings.HasPrefix(line, `data: {"session":`) {
		return 0, false
	}
	_, rest, _ := strings.Cut(line, `"index":`)
	num, _, _ := strings.Cut(rest, ",")
	i, err := strconv.Atoi(num)
	return i, err == nil
}
