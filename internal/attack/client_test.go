package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// req is one request an attacker sends.
type req struct {
	method, path, body string
	bearer             string            // the token, if any
	ctype              string            // Content-Type; application/json for a body by default
	header             map[string]string // more headers (Host included)
	stream             bool              // an event stream: read until it is live, ends or shows the cluster's status
}

// resp is what came back.
type resp struct {
	status int
	body   string
	header http.Header
}

// client is the attacker's HTTP client: no proxy from the environment,
// nothing kept between requests but connections.
var client = &http.Client{
	Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16},
	Timeout:   30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// do sends q to the server at base and keeps the answer's body for the
// secret scan (and counts the 401s for the audit probe).
func (a *attack) do(t *testing.T, base string, q req) resp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rd io.Reader
	if q.body != "" {
		rd = strings.NewReader(q.body)
	}
	r, err := http.NewRequestWithContext(ctx, q.method, base+q.path, rd)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case q.ctype != "":
		r.Header.Set("Content-Type", q.ctype)
	case q.body != "":
		r.Header.Set("Content-Type", "application/json")
	}
	if q.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+q.bearer)
	}
	for k, v := range q.header {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	res, err := client.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", q.method, q.path, err)
	}
	defer res.Body.Close()
	var b []byte
	if q.stream && res.StatusCode == http.StatusOK {
		// The history up to the first pause: what there is to see.
		buf := make([]byte, 32<<10)
		for len(b) < 4<<20 {
			n, err := res.Body.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil || bytes.Contains(b, []byte("event: live")) || bytes.Contains(b, []byte("event: end")) ||
				bytes.Contains(b, []byte("event: status")) && bytes.HasSuffix(b, []byte("\n\n")) {
				break
			}
		}
	} else {
		b, _ = io.ReadAll(res.Body)
	}
	a.keep(res.StatusCode, string(b))
	return resp{status: res.StatusCode, body: string(b), header: res.Header}
}

// must sends q and fails unless the status is want.
func (a *attack) must(t *testing.T, base string, want int, q req) string {
	t.Helper()
	r := a.do(t, base, q)
	if r.status != want {
		t.Fatalf("%s %s: %d, want %d: %s", q.method, q.path, r.status, want, r.body)
	}
	return r.body
}

// seen is what the server answered, for the secret scan.
type seen struct {
	mu     sync.Mutex
	bodies []string
	status map[int]int
}

func (a *attack) keep(status int, body string) {
	a.seen.mu.Lock()
	defer a.seen.mu.Unlock()
	if a.seen.status == nil {
		a.seen.status = map[int]int{}
	}
	a.seen.status[status]++
	a.seen.bodies = append(a.seen.bodies, body)
}

// count is how many answers of status the suite has had.
func (a *attack) count(status int) int {
	a.seen.mu.Lock()
	defer a.seen.mu.Unlock()
	return a.seen.status[status]
}

// v1err is a /v1 error body.
type v1err struct {
	Error struct {
		Code, Message, Reason, RequestID string
	} `json:"error"`
}

// errorOf decodes a /v1 error body, or fails.
func errorOf(t *testing.T, body string) v1err {
	t.Helper()
	var e v1err
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not a /v1 error (%v): %q", err, body)
	}
	return e
}

var requestIDField = regexp.MustCompile(`"request_id":"[^"]*"`)

// withoutRequestID is body without its request id, which differs for
// every request.
func withoutRequestID(body string) string { return requestIDField.ReplaceAllString(body, "") }

// decode unmarshals body into v, or fails.
func decode(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
}
