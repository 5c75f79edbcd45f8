package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/sqlite"
)

// testCtx is a context for one test; a hang fails instead of blocking.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openStore opens a fresh SQLite store in a temporary directory.
func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(testCtx(t), sqlite.Options{Path: filepath.Join(t.TempDir(), "rath.db")})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// fixture is the seeded store: a root session with a tool call that
// changed a file, a fork of its first two chunks with a chunk of its own,
// the merge of the two, and two sessions placed on incompatible sandboxes.
type fixture struct {
	root, fork, merged *session.Session
	placedA, placedB   *session.Session
}

// testDiff is the diff the root session's tool call recorded.
const testDiff = "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n-func n() int { return len(xs) + 1 }\n+func n() int { return len(xs) }\n"

// testNote is the evidence note the root session's tool call recorded.
const testNote = "a new session with the tool's server before this call"

// seed commits the fixture's sessions to st.
func seed(t testing.TB, st store.Store) fixture {
	t.Helper()
	ctx := testCtx(t)
	args := json.RawMessage(`{"path":"main.go","content":"package main"}`)
	root := session.FromSystem("You are a careful coder.").Append(
		session.User("Fix the off-by-one in main.go"),
		session.Assistant("I will edit main.go.", session.ToolCall{ID: "call_1", Name: "write_file", Args: args}).WithNode("coder"),
		session.Result(session.ToolResult{
			CallID: "call_1", Tool: "write_file", Args: args, Content: "wrote 42 bytes",
			Duration: 12 * time.Millisecond, SandboxID: "local-1",
			Effects: []session.FileEffect{{Path: "main.go", Op: session.EffectModified, Diff: testDiff, Size: 42}},
			Notes:   []session.ToolNote{{Kind: session.ToolNoteReconnected, Text: testNote}},
		}).WithNode("coder"),
		session.Assistant("Fixed: n no longer counts one too many.").WithNode("coder"),
	)
	commit(t, st, root, "")
	if err := st.SetStatus(ctx, root.ID(), store.StatusActive); err != nil {
		t.Fatal(err)
	}
	fork, err := root.ForkAt(2)
	if err != nil {
		t.Fatal(err)
	}
	fork = fork.Append(session.User("Try a fix that keeps the + 1 and changes the loop instead."))
	commit(t, st, fork, "")
	merged, err := root.Merge(fork)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, st, merged, "")

	placedA := session.FromUser("build it").To("local", session.Spec{Dir: "/tmp/a"})
	commit(t, st, placedA, "")
	placedB := placedA.Fork().To("docker", session.Spec{Image: "busybox"})
	commit(t, st, placedB, "")
	return fixture{root: root, fork: fork, merged: merged, placedA: placedA, placedB: placedB}
}

// commit commits s over prev, failing the test on error.
func commit(t testing.TB, st store.Store, s *session.Session, prev session.ChunkID) {
	t.Helper()
	if err := st.Commit(testCtx(t), s, prev); err != nil {
		t.Fatalf("commit %s: %v", s.ID(), err)
	}
}

// newTestServer starts an httptest server on the handler of a new Server.
func newTestServer(t testing.TB, st store.Store, o Options) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(st, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

// call makes a request; body, if not empty, is sent as JSON.
func call(t testing.TB, method, url, body string, header ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(testCtx(t), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	setHeaders(req, header)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// want checks the status and, for a JSON body, decodes it into v.
func (r response) want(t testing.TB, status int, v any) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body: %s", r.status, status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("decode %s: %v", r.body, err)
		}
	}
}

// wantError checks for an error response: the status and a one-sentence
// {"error": ...} body.
func (r response) wantError(t testing.TB, status int) apiError {
	t.Helper()
	var e apiError
	r.want(t, status, &e)
	if e.Error == "" || !strings.HasSuffix(e.Error, ".") {
		t.Fatalf("error body %s: want {\"error\": \"one sentence.\"}", r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type %q, want JSON", ct)
	}
	return e
}

// sseEvent is one Server-Sent Event, or a comment line (name "comment").
type sseEvent struct {
	name, id, data string
}

// readEvents parses an event stream into a channel, closed at the end of
// the stream.
func readEvents(r io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ch <- sseEvent{name: "comment", data: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event: "):
				ev.name = line[len("event: "):]
			case strings.HasPrefix(line, "id: "):
				ev.id = line[len("id: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data += line[len("data: "):]
			}
		}
	}()
	return ch
}

// nextEvent returns the next event named name (skipping others) within the
// deadline; ok is false if the stream ended first.
func nextEvent(t testing.TB, ch <-chan sseEvent, name string, within time.Duration) (sseEvent, bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return sseEvent{}, false
			}
			if ev.name == name {
				return ev, true
			}
		case <-deadline:
			t.Fatalf("no %q event within %v", name, within)
		}
	}
}

// openTail starts a tail request and returns its events; the stream is
// closed when the test ends.
func openTail(t testing.TB, url string, header ...string) (<-chan sseEvent, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	setHeaders(req, header)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("tail: %v", err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return readEvents(res.Body), res
}

// setHeaders sets name/value pairs on req; "Host" sets the request's Host.
func setHeaders(req *http.Request, kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "Host" {
			req.Host = kv[i+1]
			continue
		}
		req.Header.Set(kv[i], kv[i+1])
	}
}
