package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

const shortTimeout = 500 * time.Millisecond

func stdioConfig() ServerConfig { return serverConfig("1") }

// serverConfig runs the test binary as a stdio server in the given mode.
func serverConfig(mode string) ServerConfig {
	return ServerConfig{
		Name:    "stdio",
		Command: []string{os.Args[0]},
		// The race detector's runtime sleeps a second at exit by default.
		Env:         []string{serverEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"},
		CallTimeout: shortTimeout,
		Prefix:      "t_",
	}
}

// connect connects and lists the tools by name (without the prefix).
func connect(t *testing.T, cfg ServerConfig) (*Client, map[string]tool.Tool) {
	t.Helper()
	ctx := context.Background()
	c, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	byName := map[string]tool.Tool{}
	for _, tl := range tools {
		name, ok := strings.CutPrefix(tl.Name(), cfg.Prefix)
		if !ok {
			t.Errorf("tool %q lacks prefix %q", tl.Name(), cfg.Prefix)
		}
		byName[name] = tl
	}
	return c, byName
}

func call(t *testing.T, tl tool.Tool, args string) (string, error) {
	t.Helper()
	return tl.Call(context.Background(), tool.Env{}, json.RawMessage(args))
}

// checkTools checks the listing: every tool (over several pages), schemas
// intact, annotations and resources.
func checkTools(t *testing.T, cfg ServerConfig, tools map[string]tool.Tool) {
	t.Helper()
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"crash", "echo", "fail", "image", "pid", "rpc", "slow", "typed"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	echo := tools["echo"]
	var got, wantSchema any
	if err := json.Unmarshal(echo.Schema(), &got); err != nil {
		t.Fatalf("echo schema %s: %v", echo.Schema(), err)
	}
	_ = json.Unmarshal([]byte(echoSchema), &wantSchema)
	if !reflect.DeepEqual(got, wantSchema) {
		t.Errorf("echo schema = %s, want %s", echo.Schema(), echoSchema)
	}
	if echo.Description() != "echoes its text" {
		t.Errorf("echo description = %q", echo.Description())
	}
	if !echo.Idempotent() || !tools["pid"].Idempotent() || tools["fail"].Idempotent() {
		t.Errorf("idempotent: echo %v, pid %v, fail %v", echo.Idempotent(), tools["pid"].Idempotent(), tools["fail"].Idempotent())
	}
	res := echo.Resources(nil)
	if len(res) != 1 || res[0] != (tool.Resource{Access: tool.Write, Key: "mcp:" + cfg.Name}) {
		t.Errorf("resources = %v", res)
	}
}

// checkCalls covers results, errors and timeouts.
func checkCalls(t *testing.T, tools map[string]tool.Tool) {
	t.Helper()
	if out, err := call(t, tools["echo"], `{"text":"hi there"}`); err != nil || out != "hi there" {
		t.Errorf("echo = %q, %v", out, err)
	}
	// Blank arguments are {}.
	if _, err := call(t, tools["pid"], " "); err != nil {
		t.Errorf("pid with blank args: %v", err)
	}
	if _, err := call(t, tools["echo"], `[1]`); tool.KindOf(err) != session.ToolErrInvalidArgs {
		t.Errorf("echo with array args: %v (kind %s)", err, tool.KindOf(err))
	}

	_, err := call(t, tools["fail"], `{}`)
	var te *tool.Error
	if !errors.As(err, &te) || te.Kind != session.ToolErrExecution || te.Message != "it broke" {
		t.Errorf("fail error = %#v", err)
	}

	out, err := call(t, tools["image"], ``)
	wantOut := "a picture:\n[image image/png, 12345 bytes]\n[resource file:///x (text/plain)]\nhello"
	if err != nil || out != wantOut {
		t.Errorf("image = %q, %v; want %q", out, err, wantOut)
	}

	_, err = call(t, tools["slow"], `{}`)
	if tool.KindOf(err) != session.ToolErrTimeout {
		t.Errorf("slow error = %v (kind %s), want a timeout", err, tool.KindOf(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := tools["slow"].Call(ctx, tool.Env{}, nil); tool.KindOf(err) == session.ToolErrExecution {
		t.Errorf("slow with an ending context = %v (kind %s)", err, tool.KindOf(err))
	}
	// The session survives a timeout.
	if out, err := call(t, tools["echo"], `{"text":"after"}`); err != nil || out != "after" {
		t.Errorf("echo after timeout = %q, %v", out, err)
	}
}

// checkCrash: a call that kills the server fails as server_gone, and the
// next call starts a new session first and says so.
func checkCrash(t *testing.T, cfg ServerConfig, tools map[string]tool.Tool) {
	t.Helper()
	_, err := call(t, tools["crash"], `{}`)
	var te *tool.Error
	if !errors.As(err, &te) || te.Kind != KindServerGone || !errors.Is(err, ErrServerGone) ||
		!strings.HasPrefix(te.Message, "mcp server "+cfg.Name+" is gone: ") {
		t.Fatalf("crash error = %#v", err)
	}
	t.Logf("crash error: %s", te.Message)
	// The next call's result is the server's, byte for byte (JSON that
	// still parses); that the session was started again is a note.
	const doc = `{"back":[1,"two"]}`
	args, _ := json.Marshal(map[string]string{"text": doc})
	out, notes, err := callNoted(t, tools["echo"], string(args))
	if err != nil {
		t.Fatalf("echo after crash: %v", err)
	}
	if out != doc || !json.Valid([]byte(out)) {
		t.Errorf("echo after crash = %q, want %q", out, doc)
	}
	checkNote(t, cfg, notes)
}

func TestStdio(t *testing.T) {
	cfg := stdioConfig()
	_, tools := connect(t, cfg)
	checkTools(t, cfg, tools)
	checkCalls(t, tools)

	pid1, err := call(t, tools["pid"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	checkCrash(t, cfg, tools)
	pid2, err := call(t, tools["pid"], `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if pid1 == pid2 {
		t.Errorf("pid %s unchanged after the crash: no new process", pid1)
	}
}

func TestClose(t *testing.T) {
	ctx := context.Background()
	c, err := Connect(ctx, stdioConfig())
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := tools[0].Call(ctx, tool.Env{}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close = %v, want ErrClosed", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []ServerConfig{
		{Command: []string{"x"}},
		{Name: "a"},
		{Name: "a", Command: []string{"x"}, URL: "http://x"},
		{Name: "a", Command: []string{""}},
		{Name: "a", URL: "http://x", CallTimeout: -1},
	} {
		if _, err := Connect(context.Background(), cfg); err == nil {
			t.Errorf("Connect(%+v) succeeded", cfg)
		}
	}
	_, err := Connect(context.Background(), ServerConfig{Name: "nope", Command: []string{"/nonexistent/mcp-server"}})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Connect to a missing command = %v", err)
	}
}
