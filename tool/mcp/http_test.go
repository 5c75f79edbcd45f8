package mcp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openrath/rath/session"
)

// dropServer serves MCP over streamable HTTP. A call of the crash tool
// loses every session and breaks the connection, as a restarted server
// would.
type dropServer struct {
	mu      sync.Mutex
	handler http.Handler
	header  string // the last X-Test header seen
	noGet   bool   // offer no standalone stream (answer GET with 405)
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
	h, noGet := d.handler, d.noGet
	d.mu.Unlock()
	if noGet && r.Method == http.MethodGet {
		http.Error(w, "no stream here", http.StatusMethodNotAllowed)
		return
	}
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

// A server without a standalone stream gives no sign of a restart until a
// call is refused for its session (404): that call never ran, so it is sent
// again on a new session, and succeeds saying so.
func TestStreamableHTTPRefusedCallIsResent(t *testing.T) {
	d := newDropServer()
	d.noGet = true
	ts := httptest.NewServer(d)
	t.Cleanup(ts.Close)
	cfg := ServerConfig{Name: "web", URL: ts.URL, CallTimeout: shortTimeout}
	_, tools := connect(t, cfg)
	if out, err := call(t, tools["echo"], `{"text":"one"}`); err != nil || out != "one" {
		t.Fatalf("echo = %q, %v", out, err)
	}
	d.reset() // the server forgets every session, as a restarted one would
	out, notes, err := callNoted(t, tools["echo"], `{"text":"two"}`)
	if err != nil {
		t.Fatalf("echo after the restart: %v", err)
	}
	if out != "two" {
		t.Errorf("echo after the restart = %q", out)
	}
	if len(notes) != 2 || !strings.Contains(notes[0].Text, "HTTP 404") || notes[1].Kind != session.ToolNoteResent {
		t.Fatalf("notes = %+v, want a reconnection after HTTP 404, then the call resent", notes)
	}
	checkNote(t, cfg, notes[:1])
}
