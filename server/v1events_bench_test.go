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

// BenchmarkSSEFanout: subscribers (1,000, or RATH_SSE_SUBSCRIBERS) follow
// one session's /v1 event stream while 100 chunks are committed to it, one
// every 5 ms; reports p50 and p99 of the time from a commit's return to
// the chunk's event at each subscriber.
func BenchmarkSSEFanout(b *testing.B) {
	subs := 1000
	if n, err := strconv.Atoi(os.Getenv("RATH_SSE_SUBSCRIBERS")); err == nil && n > 0 {
		subs = n
	}
	const commits = 100
	st := openStore(b)
	s := session.FromUser("busy")
	commit(b, st, s, "")
	_, ts := newTestServer(b, st, Options{MaxSubscribers: int64(subs), MaxSubscribersPerTenant: int64(subs), MaxSubscribersPerPrincipal: int64(subs)})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: subs}}
	var lat []time.Duration
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		first := s.Len()
		committed := make([]time.Time, commits)
		got := make([][]time.Time, subs)
		var ready, done sync.WaitGroup
		for k := range subs {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				got[k] = follow(ctx, b, hc, ts.URL+"/v1/sessions/"+string(s.ID())+"/events", strconv.Itoa(first-1), first, commits, &ready, sessionIndex)
			}()
		}
		ready.Wait() // every subscriber is live
		for i := range commits {
			prev := s.Head()
			s = s.Append(session.User(fmt.Sprint("chunk ", i)))
			commit(b, st, s, prev)
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

// sessionIndex reads a session stream's chunk index from its id line.
func sessionIndex(line string) (int, bool) {
	id, ok := strings.CutPrefix(line, "id: ")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(id)
	return i, err == nil
}

// follow reads one stream from after the event last until it has the n
// chunks from index first (index reads one from a line), and returns when
// each arrived.
func follow(ctx context.Context, b *testing.B, hc *http.Client, url, last string, first, n int, ready *sync.WaitGroup, index func(string) (int, bool)) []time.Time {
	at := make([]time.Time, n)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
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
		case isLive:
			i, ok := index(line)
			if ok && i-first >= 0 && i-first < n && at[i-first].IsZero() {
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
