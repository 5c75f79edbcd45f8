package server

import (
	"bufio"
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
	_, ts := newTestServer(b, st, Options{Runs: runs, MaxSubscribers: int64(subs)})
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
				got[k] = followRun(ctx, b, hc, url, first, commits, &ready)
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

// followRun reads a run stream until it has the n chunks of the agent's
// session from index first, and returns when each arrived.
func followRun(ctx context.Context, b *testing.B, hc *http.Client, url string, first, n int, ready *sync.WaitGroup) []time.Time {
	at := make([]time.Time, n)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := hc.Do(req)
	if err != nil {
		ready.Done()
		b.Error(err)
		return at
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	isLive, seen := false, 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !isLive && line == "event: live":
			isLive = true
			ready.Done()
		case isLive && strings.HasPrefix(line, `data: {"session":`):
			_, rest, _ := strings.Cut(line, `"index":`)
			num, _, _ := strings.Cut(rest, ",")
			i, _ := strconv.Atoi(num)
			if i-first >= 0 && i-first < n && at[i-first].IsZero() {
				at[i-first] = time.Now()
				if seen++; seen == n {
					return at
				}
			}
		}
	}
	if !isLive {
		ready.Done()
	}
	return at
}
