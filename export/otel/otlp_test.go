package otel

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/openrath/rath/session"
)

// collector records the OTLP requests it receives.
type collector struct {
	mu   sync.Mutex
	reqs []received
}

type received struct {
	method, path, contentType string
	size                      int
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.reqs = append(c.reqs, received{r.Method, r.URL.Path, r.Header.Get("Content-Type"), len(body)})
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func (c *collector) received() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.reqs...)
}

func TestOTLP(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()

	tp, err := OTLP(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := Export(t.Context(), tp, session.FromUser("hello")); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqs := col.received()
	if len(reqs) == 0 {
		t.Fatal("the collector received no request")
	}
	for _, r := range reqs {
		if r.method != http.MethodPost || r.path != "/v1/traces" || r.contentType != "application/x-protobuf" || r.size == 0 {
			t.Errorf("request %+v, want a non-empty POST /v1/traces of application/x-protobuf", r)
		}
	}
}

func TestTracesURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://localhost:4318", "http://localhost:4318/v1/traces"},
		{"http://localhost:4318/", "http://localhost:4318/v1/traces"},
		{"https://collector.example/otlp", "https://collector.example/otlp/v1/traces"},
		{"http://localhost:4318/v1/traces", "http://localhost:4318/v1/traces"},
		{"localhost:4318", "http://localhost:4318/v1/traces"},
	} {
		got, err := tracesURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("tracesURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "ftp://host:21", "http://", "http://[::1"} {
		if got, err := tracesURL(bad); err == nil {
			t.Errorf("tracesURL(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := OTLP(t.Context(), ""); err == nil {
		t.Error("OTLP with no endpoint succeeded")
	}
}
