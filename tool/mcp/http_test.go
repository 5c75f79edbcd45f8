package mcp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// dropServer serves MCP over streamable HTTP. A call of the crash tool
// loses every session and breaks the connection, as a restarted server
// would.
type dropServer struct {
	mu      sync.Mutex
	handler http.Handler
	header  string // the last X-Test header seen
}

func newDropServer() *dropServer {
	d := &dropServer{}
	d.reset()
	return d
}

func (d *dropServer) reset() {
	srv := newTestServer(func() {})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	d.mu.Lock()
	d.handler = h
	d.mu.Unlock()
}

func (d *dropServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	d.mu.Lock()
	d.header = r.Header.Get("X-Test")
	h := d.handler
	d.mu.Unlock()
	if bytes.Contains(body, []byte(`"name":"crash"`)) {
		d.reset()
		panic(http.ErrAbortHandler)
	}
	h.ServeHTTP(w, r)
}

func TestStreamableHTTP(t *testing.T) {
	d := newDropServer()
	ts := httptest.NewServer(d)
	t.Cleanup(ts.Close) // after the client's Close, which connect registers later
	cfg := ServerConfig{
		Name:        "web",
		URL:         ts.URL,
		Headers:     map[string]string{"X-Test": "yes"},
		CallTimeout: shortTimeout,
	}
	_, tools := connect(t, cfg)
	checkTools(t, cfg, tools)
	checkCalls(t, tools)
	checkCrash(t, cfg, tools)
	d.mu.Lock()
	header := d.header
	d.mu.Unlock()
	if header != "yes" {
		t.Errorf("X-Test header = %q", header)
	}
}
