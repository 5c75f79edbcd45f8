package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

const mcpToken = "ghp-rath-secret-MCP-5d1e"

// A header given as a secret reference is sent resolved, stays a reference
// in the config, and the value is scrubbed from results and errors.
func TestHeaderSecretReference(t *testing.T) {
	t.Setenv("RATH_MCP_TEST_TOKEN", mcpToken)
	var purposes []string
	remove := secret.Observe(func(ctx context.Context, ref secret.Ref, err error) {
		if ref.Name == "RATH_MCP_TEST_TOKEN" {
			purposes = append(purposes, secret.Purpose(ctx))
		}
	})
	defer remove()
	d := newDropServer()
	ts := httptest.NewServer(d)
	t.Cleanup(ts.Close)
	cfg := ServerConfig{Name: "web", URL: ts.URL, CallTimeout: shortTimeout,
		Headers: map[string]string{"X-Test": "Bearer secret://env/RATH_MCP_TEST_TOKEN"}}
	c, tools := connect(t, cfg)
	d.mu.Lock()
	header := d.header
	d.mu.Unlock()
	if header != "Bearer "+mcpToken {
		t.Errorf("X-Test header = %q", header)
	}
	if c.cfg.Headers["X-Test"] != "Bearer secret://env/RATH_MCP_TEST_TOKEN" {
		t.Errorf("the config now holds %q", c.cfg.Headers["X-Test"])
	}
	if len(purposes) != 1 || purposes[0] != "mcp server web" {
		t.Errorf("observed %q", purposes)
	}
	// The server echoes the token: the result says [redacted].
	out, notes, err := callNoted(t, tools["echo"], `{"text":"token is `+mcpToken+`"}`)
	if err != nil || out != "token is [redacted]" {
		t.Errorf("echo = %q, %v", out, err)
	}
	if len(notes) != 1 || notes[0].Kind != session.ToolNoteRedacted || strings.Contains(notes[0].Text, mcpToken) {
		t.Errorf("notes = %+v, want one that a secret was scrubbed", notes)
	}
	if _, notes := mustCallNoted(t, tools["echo"], `{"text":"nothing to hide"}`); len(notes) != 0 {
		t.Errorf("notes on a clean result = %+v", notes)
	}
	// And an error quoting it: still a *tool.Error of its kind.
	args, _ := json.Marshal(map[string]any{"code": -32602, "message": "bad token " + mcpToken})
	_, notes, err = callNoted(t, tools["rpc"], string(args))
	var te *tool.Error
	if !errors.As(err, &te) || te.Kind != session.ToolErrInvalidArgs || strings.Contains(err.Error(), mcpToken) ||
		strings.Contains(te.Message, mcpToken) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("rpc error = %v (%#v)", err, te)
	}
	if len(notes) != 1 || notes[0].Kind != session.ToolNoteRedacted {
		t.Errorf("notes on the scrubbed error = %+v", notes)
	}
	args, _ = json.Marshal(map[string]any{"code": -32602, "message": "bad limit"})
	if _, notes, err := callNoted(t, tools["rpc"], string(args)); err == nil || len(notes) != 0 {
		t.Errorf("a clean error = %v, notes %+v", err, notes)
	}
}

// An env entry given as a secret reference reaches the stdio server's
// process resolved: here the reference names the test server's mode,
// "fail", which makes it exit with status 2 when its input closes (the
// unresolved reference would be read as the ordinary mode).
func TestEnvSecretReference(t *testing.T) {
	t.Setenv("RATH_MCP_TEST_MODE", "fail")
	cfg := stdioConfig()
	cfg.Env = slices.Clone(cfg.Env)
	cfg.Env[0] = serverEnv + "=secret://env/RATH_MCP_TEST_MODE"
	c, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "2") {
		t.Fatalf("Close = %v; want the failing mode's exit", err)
	}
}

func TestSecretReferenceErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Connect(ctx, ServerConfig{Name: "a", URL: "http://127.0.0.1:1", Headers: map[string]string{"K": "secret://env/"}})
	if !errors.Is(err, secret.ErrBadRef) || !strings.Contains(err.Error(), "header K") {
		t.Errorf("malformed: %v", err)
	}
	_, err = Connect(ctx, ServerConfig{Name: "a", Command: []string{"x"}, Env: []string{"K=secret:nope"}})
	if !errors.Is(err, secret.ErrBadRef) || !strings.Contains(err.Error(), "env K") {
		t.Errorf("malformed env: %v", err)
	}
	_, err = Connect(ctx, ServerConfig{Name: "a", Command: []string{"x"}, Env: []string{"K=secret://env/RATH_MCP_TEST_UNSET"}})
	if !errors.Is(err, secret.ErrNotFound) || !strings.Contains(err.Error(), "secret://env/RATH_MCP_TEST_UNSET") {
		t.Errorf("unresolved: %v", err)
	}
}

func TestWithSecrets(t *testing.T) {
	t.Setenv("RATH_MCP_TEST_A", "value-a")
	cfg := ServerConfig{Name: "s", Env: []string{"PLAIN=x", "A=secret://env/RATH_MCP_TEST_A", "NOEQ", "B=token secret://env/RATH_MCP_TEST_A"},
		Headers: map[string]string{"H": "secret://env/RATH_MCP_TEST_A", "P": "plain words"}}
	got, vals, err := cfg.withSecrets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PLAIN=x", "A=value-a", "NOEQ", "B=token value-a"}
	if !slices.Equal(got.Env, want) || got.Headers["H"] != "value-a" || got.Headers["P"] != "plain words" || len(vals) != 3 {
		t.Fatalf("got %q %q (%d values)", got.Env, got.Headers, len(vals))
	}
	if cfg.Env[1] != "A=secret://env/RATH_MCP_TEST_A" || cfg.Headers["H"] != "secret://env/RATH_MCP_TEST_A" {
		t.Fatal("the config was changed")
	}
}
