package mcp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// These tests run the reference MCP servers from npm (see reference).

// mustCall calls and fails the test on an error.
func mustCall(t *testing.T, tl tool.Tool, args string) string {
	t.Helper()
	if tl == nil {
		t.Fatal("no such tool")
	}
	out, err := call(t, tl, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Name(), args, err)
	}
	return out
}

// wantKind checks that a call fails with the given kind.
func wantKind(t *testing.T, tl tool.Tool, args, kind string) error {
	t.Helper()
	_, err := call(t, tl, args)
	if k := tool.KindOf(err); err == nil || k != kind {
		t.Errorf("%s %s = %v (kind %s), want a %s error", tl.Name(), args, err, k, kind)
	}
	return err
}

func hasTools(t *testing.T, tools map[string]tool.Tool, names ...string) {
	t.Helper()
	for _, n := range names {
		if tools[n] == nil {
			var got []string
			for k := range tools {
				got = append(got, k)
			}
			slices.Sort(got)
			t.Fatalf("no tool %s among %v", n, got)
		}
	}
}

func TestReferenceFilesystem(t *testing.T) {
	dir := reference(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, tools := open(t, referenceStdio(dir, "server-filesystem", root))
	hasTools(t, tools, "write_file", "read_text_file", "list_directory")
	file := filepath.Join(root, "note.txt")
	mustCall(t, tools["write_file"], `{"path":"`+file+`","content":"hello from rath\n"}`)
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello from rath\n" {
		t.Errorf("the file holds %q, %v", b, err)
	}
	if out := mustCall(t, tools["read_text_file"], `{"path":"`+file+`"}`); !strings.Contains(out, "hello from rath") {
		t.Errorf("read_text_file = %q", out)
	}
	if out := mustCall(t, tools["list_directory"], `{"path":"`+root+`"}`); !strings.Contains(out, "note.txt") {
		t.Errorf("list_directory = %q", out)
	}
	// Outside the allowed directory: the tool ran and refused.
	outside := filepath.Join(t.TempDir(), "x.txt")
	if err := wantKind(t, tools["read_text_file"], `{"path":"`+outside+`"}`, session.ToolErrExecution); err != nil &&
		!strings.Contains(err.Error(), "Access denied") {
		t.Errorf("reading outside the root: %v", err)
	}
	// The server's own argument validation.
	wantKind(t, tools["read_text_file"], `{}`, session.ToolErrInvalidArgs)
	wantKind(t, tools["write_file"], `{"path":7}`, session.ToolErrInvalidArgs)
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestReferenceMemory(t *testing.T) {
	dir := reference(t)
	store := filepath.Join(t.TempDir(), "memory.jsonl")
	cfg := referenceStdio(dir, "server-memory")
	cfg.Env = []string{"MEMORY_FILE_PATH=" + store}
	c, tools := open(t, cfg)
	hasTools(t, tools, "create_entities", "read_graph", "search_nodes")
	mustCall(t, tools["create_entities"], `{"entities":[{"name":"rath","entityType":"project","observations":["written in Go"]}]}`)
	before := mustCall(t, tools["read_graph"], `{}`)
	if !strings.Contains(before, `"rath"`) || !strings.Contains(before, "written in Go") || !json.Valid([]byte(before)) {
		t.Errorf("read_graph = %q", before)
	}
	if b, err := os.ReadFile(store); err != nil || !strings.Contains(string(b), "written in Go") {
		t.Errorf("the memory file holds %q, %v", b, err)
	}
	wantKind(t, tools["create_entities"], `{"entities":"rath"}`, session.ToolErrInvalidArgs)
	wantKind(t, tools["search_nodes"], `{}`, session.ToolErrInvalidArgs)

	// Killed while idle, the server is restarted before the next call,
	// which succeeds and finds the graph the server kept on disk: its
	// result is the server's JSON, byte for byte as before the kill, and
	// the restart is a note of its own.
	if err := serverProcess(t, c).cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	goneSoon(t, c)
	graph, notes := mustCallNoted(t, tools["read_graph"], `{}`)
	if graph != before || !json.Valid([]byte(graph)) {
		t.Errorf("read_graph after the restart = %q, want %q", graph, before)
	}
	if note := checkNote(t, cfg, notes); !strings.Contains(note.Text, "signal: killed") {
		t.Errorf("note %q does not say how the server ended", note.Text)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// checkEcho calls the everything server's echo after a restart: the
// result is the server's, the restart a note.
func checkEcho(t *testing.T, cfg ServerConfig, echo tool.Tool, msg string) {
	t.Helper()
	out, notes := mustCallNoted(t, echo, `{"message":"`+msg+`"}`)
	if out != "Echo: "+msg {
		t.Errorf("echo = %q, want %q", out, "Echo: "+msg)
	}
	checkNote(t, cfg, notes)
}

// checkEverything lists and calls the tools of the "everything" server.
func checkEverything(t *testing.T, tools map[string]tool.Tool) {
	t.Helper()
	hasTools(t, tools, "echo", "get-sum", "trigger-long-running-operation")
	if out := mustCall(t, tools["echo"], `{"message":"hi there"}`); out != "Echo: hi there" {
		t.Errorf("echo = %q", out)
	}
	if out := mustCall(t, tools["get-sum"], `{"a":2,"b":40}`); !strings.Contains(out, "42") {
		t.Errorf("get-sum = %q", out)
	}
	wantKind(t, tools["echo"], `{}`, session.ToolErrInvalidArgs)
	wantKind(t, tools["get-sum"], `{"a":"two","b":40}`, session.ToolErrInvalidArgs)
}

// The "everything" server does not exit when its input closes: Close
// stops it with a signal and reports success.
func TestReferenceEverythingStdio(t *testing.T) {
	dir := reference(t)
	c, tools := open(t, referenceStdio(dir, "server-everything"))
	checkEverything(t, tools)
	p := serverProcess(t, c)
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v, want nil", err)
	}
	if !p.signalled.Load() {
		t.Log("the server exited when its input closed: the signal path was not taken")
	}
}

// A stdio server killed while idle is restarted before the next call.
func TestReferenceEverythingStdioRestart(t *testing.T) {
	dir := reference(t)
	cfg := referenceStdio(dir, "server-everything")
	c, tools := open(t, cfg)
	mustCall(t, tools["echo"], `{"message":"one"}`)
	if err := serverProcess(t, c).cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	goneSoon(t, c)
	checkEcho(t, cfg, tools["echo"], "two")
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestReferenceEverythingHTTP(t *testing.T) {
	dir := reference(t)
	_, cfg := everythingHTTP(t, dir, freeAddr(t))
	c, tools := open(t, cfg)
	checkEverything(t, tools)
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// Killed during a call, the HTTP server is found gone: the call fails as
// server_gone, not as a timeout, and Close does not report it again.
func TestReferenceEverythingHTTPGone(t *testing.T) {
	dir := reference(t)
	addr := freeAddr(t)
	srv, cfg := everythingHTTP(t, dir, addr)
	c, tools := open(t, cfg)
	done := make(chan error, 1)
	go func() {
		_, err := tools["trigger-long-running-operation"].Call(testCtx(t), tool.Env{}, []byte(`{"duration":25,"steps":25}`))
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // let the call reach the server
	killed := time.Now()
	kill(t, srv, addr)
	var err error
	select {
	case err = <-done:
	case <-time.After(patience):
		t.Fatal("the call did not end")
	}
	var te *tool.Error
	if !errors.As(err, &te) || te.Kind != KindServerGone || !errors.Is(err, ErrServerGone) {
		t.Fatalf("call error = %v (kind %s), want %s", err, tool.KindOf(err), KindServerGone)
	}
	t.Logf("call error %s after the kill: %v", time.Since(killed), err) // for information only
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// Killed while idle, the HTTP server is noticed without a call; a call
// while it is down is server_gone; restarted on the same port, it is
// reconnected before the next call.
func TestReferenceEverythingHTTPRestart(t *testing.T) {
	dir := reference(t)
	addr := freeAddr(t)
	srv, cfg := everythingHTTP(t, dir, addr)
	c, tools := open(t, cfg)
	mustCall(t, tools["echo"], `{"message":"one"}`)
	kill(t, srv, addr)
	goneSoon(t, c)
	wantKind(t, tools["echo"], `{"message":"down"}`, KindServerGone)
	srv, _ = everythingHTTP(t, dir, addr)
	checkEcho(t, cfg, tools["echo"], "two")

	// Restarted between two calls, whether or not the client noticed in
	// between: the call is answered.
	kill(t, srv, addr)
	everythingHTTP(t, dir, addr)
	checkEcho(t, cfg, tools["echo"], "three")
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
