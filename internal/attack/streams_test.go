package attack

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// held is an event stream kept open.
type held struct {
	status int
	body   string // up to "event: live", or the whole refusal
	close  func()
}

// streamClient holds many streams at once.
var streamClient = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}

// open opens the event stream at path and keeps it open until close. A
// request that fails has status 0 and the error as its body. It may run
// on any goroutine.
func (a *attack) open(bearer, path string) held {
	ctx, cancel := context.WithCancel(context.Background())
	r, err := http.NewRequestWithContext(ctx, "GET", a.url()+path, nil)
	if err != nil {
		cancel()
		return held{body: err.Error(), close: func() {}}
	}
	r.Header.Set("Authorization", "Bearer "+bearer)
	res, err := streamClient.Do(r)
	if err != nil {
		cancel()
		return held{body: err.Error(), close: func() {}}
	}
	h := held{status: res.StatusCode, close: func() { cancel(); res.Body.Close() }}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		h.body = string(b)
		h.close()
		a.keep(res.StatusCode, h.body)
		return h
	}
	// Read until the stream is live: the server counts it by then.
	var b strings.Builder
	rd := bufio.NewReader(res.Body)
	timer := time.AfterFunc(20*time.Second, cancel)
	defer timer.Stop()
	for !strings.Contains(b.String(), "event: live") {
		line, err := rd.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			break
		}
	}
	h.body = b.String()
	a.keep(res.StatusCode, h.body)
	return h
}

// openMany opens n streams of bearer at path at once.
func (a *attack) openMany(t *testing.T, bearer, path string, n int) []held {
	t.Helper()
	hs := make([]held, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range hs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			hs[i] = a.open(bearer, path)
		}()
	}
	wg.Wait()
	for i, h := range hs {
		if h.status != http.StatusOK || !strings.Contains(h.body, "event: live") {
			t.Fatalf("stream %d of %d: %d %.300s", i+1, n, h.status, h.body)
		}
	}
	return hs
}

// probeStreams: one token holds at most 64 event streams and one tenant
// 250 (429 naming the limit each time), and a tenant at its limit leaves
// the other tenant its streams; streams closed are given back.
func probeStreams(t *testing.T, a *attack) {
	path := "/v1/sessions/" + a.imp + "/events"
	var all []held
	defer func() {
		for _, h := range all {
			h.close()
		}
	}()
	refused := func(who, reason string) {
		t.Helper()
		h := a.open(a.tok[who], path)
		if h.status != http.StatusTooManyRequests {
			h.close()
			t.Fatalf("%s: stream past the limit: %d, want 429 %s: %.300s", who, h.status, reason, h.body)
		}
		if e := errorOf(t, h.body); e.Error.Code != "exhausted" || e.Error.Reason != reason {
			t.Errorf("%s: stream past the limit: %+v, want exhausted, %s", who, e.Error, reason)
		}
	}
	all = append(all, a.openMany(t, a.tok["acme-web"], path, 64)...)
	refused("acme-web", "streams_principal")
	all = append(all, a.openMany(t, a.tok["acme-admin"], path, 64)...)
	all = append(all, a.openMany(t, a.tok["acme-read"], path, 64)...)
	all = append(all, a.openMany(t, a.tok["acme-ci"], path, 250-3*64)...)
	refused("acme-ci", "streams_tenant")
	refused("acme-web", "streams_tenant")

	// The other tenant is not shut out.
	var created struct{ ID string }
	decode(t, a.must(t, a.url(), http.StatusOK, req{method: "POST", path: "/v1/sessions:import", body: importLine("globex's own"),
		ctype: "application/x-ndjson", bearer: a.tok["globex-admin"]}), &created)
	all = append(all, a.openMany(t, a.tok["globex-admin"], "/v1/sessions/"+created.ID+"/events", 8)...)

	// Closed streams are given back (the server notices as it writes
	// its next heartbeat, or at once: poll).
	for _, h := range all {
		h.close()
	}
	all = nil
	for deadline := time.Now().Add(60 * time.Second); ; {
		h := a.open(a.tok["acme-web"], path)
		h.close()
		if h.status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("streams closed are not given back: %d %.300s", h.status, h.body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
