package mcp

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// open connects without the Close check of connect: these tests check
// Close themselves. The client is closed when the test ends if not before.
func open(t *testing.T, cfg ServerConfig) (*Client, map[string]tool.Tool) {
	t.Helper()
	ctx := testCtx(t)
	c, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	list, err := c.Tools(ctx)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	tools := map[string]tool.Tool{}
	for _, tl := range list {
		tools[strings.TrimPrefix(tl.Name(), cfg.Prefix)] = tl
	}
	return c, tools
}

// process returns the client's current stdio server process.
func serverProcess(t *testing.T, c *Client) *process {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil || c.conn.proc == nil {
		t.Fatal("no stdio server process")
	}
	return c.conn.proc
}

// A server that stays alive when its input closes is stopped by a signal,
// and Close reports success: stopping it is not its failure.
func TestCloseStopsLingeringServer(t *testing.T) {
	c, _ := open(t, serverConfig("linger"))
	p := serverProcess(t, c)
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v, want nil", err)
	}
	status, ok := p.hasExited()
	if !ok || !p.signalled.Load() {
		t.Fatalf("after Close: exited %v, signalled %v", ok, p.signalled.Load())
	}
	t.Logf("the server ended with %v", status)
}

// A server that fails as it exits makes Close fail.
func TestCloseReportsFailureStatus(t *testing.T) {
	c, _ := open(t, serverConfig("fail"))
	err := c.Close()
	if err == nil || errors.Is(err, ErrServerGone) || !strings.Contains(err.Error(), "exit status 2") ||
		!strings.Contains(err.Error(), "failing on close") {
		t.Fatalf("Close = %v, want the exit status and the server's stderr", err)
	}
}

// A server that died while idle, unnoticed by any call, makes Close fail.
func TestCloseReportsEarlierCrash(t *testing.T) {
	c, _ := open(t, stdioConfig())
	p := serverProcess(t, c)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	goneSoon(t, c)
	err := c.Close()
	if !errors.Is(err, ErrServerGone) || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("Close = %v, want ErrServerGone naming the signal", err)
	}
}

// A call in flight when Close comes ends with ErrClosed, at once.
func TestCloseDuringCall(t *testing.T) {
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			cfg := stdioConfig()
			if mode == "http" {
				addr := freeAddr(t)
				goHTTPServer(t, addr)
				cfg = httpConfig(addr)
			}
			cfg.CallTimeout = patience
			c, tools := open(t, cfg)
			done := make(chan error, 1)
			go func() {
				_, err := tools["slow"].Call(testCtx(t), tool.Env{}, nil)
				done <- err
			}()
			time.Sleep(200 * time.Millisecond) // let the call reach the server
			if err := c.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			if err := <-done; !errors.Is(err, ErrClosed) {
				t.Errorf("the call = %v, want ErrClosed", err)
			}
		})
	}
}

// A crash a call has already reported is not reported again by Close.
func TestCloseAfterReportedCrash(t *testing.T) {
	c, tools := open(t, stdioConfig())
	if _, err := call(t, tools["crash"], `{}`); tool.KindOf(err) != KindServerGone {
		t.Fatalf("crash = %v, want %s", err, KindServerGone)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v, want nil", err)
	}
}

// A stdio server killed while idle is restarted before the next call,
// which succeeds and says so.
func TestStdioIdleCrashRestarts(t *testing.T) {
	cfg := stdioConfig()
	c, tools := open(t, cfg)
	pid1, err := call(t, tools["pid"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := serverProcess(t, c).cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	goneSoon(t, c)
	pid2, notes, err := callNoted(t, tools["pid"], `{}`)
	if err != nil {
		t.Fatalf("pid after the crash: %v", err)
	}
	if _, err := strconv.Atoi(pid2); err != nil {
		t.Errorf("pid after the crash = %q: not the server's answer alone", pid2)
	}
	if note := checkNote(t, cfg, notes); !strings.Contains(note.Text, "signal: killed") {
		t.Errorf("note %q does not say how the server ended", note.Text)
	}
	if pid2 == pid1 {
		t.Errorf("pid %s unchanged: no new process", pid1)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// A restart made by a listing is still told to the next call.
func TestRestartNoteSurvivesListing(t *testing.T) {
	cfg := stdioConfig()
	c, tools := open(t, cfg)
	if err := serverProcess(t, c).cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	goneSoon(t, c)
	if _, err := c.Tools(testCtx(t)); err != nil {
		t.Fatalf("Tools after the crash: %v", err)
	}
	out, notes := mustCallNoted(t, tools["echo"], `{"text":"after"}`)
	if out != "after" {
		t.Errorf("echo = %q", out)
	}
	checkNote(t, cfg, notes)
	out, notes = mustCallNoted(t, tools["echo"], `{"text":"again"}`)
	if out != "again" {
		t.Errorf("the call after = %q", out)
	}
	noNotes(t, notes)
}

func httpConfig(addr string) ServerConfig {
	return ServerConfig{Name: "web", URL: "http://" + addr, CallTimeout: 30 * time.Second}
}

// A streamable-HTTP server killed during a call: the call ends as
// server_gone (not as a timeout, not after the SDK's reconnect attempts).
func TestHTTPServerGoneDuringCall(t *testing.T) {
	addr := freeAddr(t)
	srv := goHTTPServer(t, addr)
	c, tools := open(t, httpConfig(addr))
	done := make(chan error, 1)
	go func() {
		_, err := tools["slow"].Call(testCtx(t), tool.Env{}, nil)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the call reach the server
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
	t.Logf("call error: %v", err)
	if err := c.Close(); err != nil {
		t.Errorf("Close after a reported end = %v", err)
	}
}

// A streamable-HTTP server killed while idle is noticed without a call; a
// call while it is down fails as server_gone; once it is back on the same
// port, the next call reconnects first and says so.
func TestHTTPServerIdleGoneAndBack(t *testing.T) {
	addr := freeAddr(t)
	srv := goHTTPServer(t, addr)
	cfg := httpConfig(addr)
	c, tools := open(t, cfg)
	if out, err := call(t, tools["echo"], `{"text":"one"}`); err != nil || out != "one" {
		t.Fatalf("echo = %q, %v", out, err)
	}
	kill(t, srv, addr)
	goneSoon(t, c)
	if _, err := call(t, tools["echo"], `{"text":"down"}`); tool.KindOf(err) != KindServerGone || !errors.Is(err, ErrServerGone) {
		t.Fatalf("echo while down = %v (kind %s), want %s", err, tool.KindOf(err), KindServerGone)
	}
	goHTTPServer(t, addr)
	out, notes, err := callNoted(t, tools["echo"], `{"text":"two"}`)
	if err != nil {
		t.Fatalf("echo after the restart: %v", err)
	}
	if out != "two" {
		t.Errorf("echo after the restart = %q", out)
	}
	checkNote(t, cfg, notes)
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// A streamable-HTTP server restarted on the same port between two calls
// (no time for the client to notice): the second call still succeeds,
// reconnected.
func TestHTTPServerRestartedBetweenCalls(t *testing.T) {
	addr := freeAddr(t)
	srv := goHTTPServer(t, addr)
	cfg := httpConfig(addr)
	c, tools := open(t, cfg)
	if _, err := call(t, tools["echo"], `{"text":"one"}`); err != nil {
		t.Fatal(err)
	}
	kill(t, srv, addr)
	goHTTPServer(t, addr)
	out, notes, err := callNoted(t, tools["echo"], `{"text":"two"}`)
	if err != nil {
		t.Fatalf("echo after the restart: %v", err)
	}
	if out != "two" {
		t.Errorf("echo after the restart = %q", out)
	}
	checkNote(t, cfg, notes)
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// A server that cannot be reached at all is server_gone from the start.
func TestHTTPServerNeverThere(t *testing.T) {
	_, err := Connect(context.Background(), httpConfig(freeAddr(t)))
	if !errors.Is(err, ErrServerGone) {
		t.Fatalf("Connect = %v, want ErrServerGone", err)
	}
}

// The kinds a server's failures are recorded as, over both transports.
func TestServerErrorKinds(t *testing.T) {
	addr := freeAddr(t)
	goHTTPServer(t, addr)
	for _, cfg := range []ServerConfig{stdioConfig(), httpConfig(addr)} {
		_, tools := open(t, cfg)
		for _, c := range []struct{ tool, args, kind string }{
			{"typed", `{}`, session.ToolErrInvalidArgs},
			{"typed", `{"text":"a","nope":1}`, session.ToolErrInvalidArgs},
			{"typed", `{"text":7}`, session.ToolErrInvalidArgs},
			{"fail", `{}`, session.ToolErrExecution},
			{"rpc", `{"code":-32602,"message":"bad limit"}`, session.ToolErrInvalidArgs},
			{"rpc", `{"code":-32602,"message":"unknown tool \"x\""}`, session.ToolErrUnknownTool},
			{"rpc", `{"code":-32603,"message":"oops"}`, session.ToolErrExecution},
		} {
			_, err := call(t, tools[c.tool], c.args)
			if k := tool.KindOf(err); k != c.kind {
				t.Errorf("%s: %s %s = %v (kind %s), want %s", cfg.Name, c.tool, c.args, err, k, c.kind)
			}
		}
	}
}
