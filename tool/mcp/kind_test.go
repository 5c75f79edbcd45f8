package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// resultTexts are isError texts and their kinds; the first ones are what
// the reference servers and the SDKs write.
var resultTexts = []struct{ text, kind string }{
	{"MCP error -32602: Input validation error: Invalid arguments for tool echo: Invalid input: expected string, received undefined at message", session.ToolErrInvalidArgs},
	{"MCP error -32602: Tool nosuch not found", session.ToolErrUnknownTool},
	{"MCP error -32602: Tool echo disabled", session.ToolErrUnknownTool},
	{"MCP error -32602: Invalid arguments for tool x: arguments contain more than the maximum of 10 elements", session.ToolErrInvalidArgs},
	{"Input validation error: Invalid arguments for tool echo: expected string", session.ToolErrInvalidArgs},
	{`validating "arguments": validating root: required: missing properties: ["text"]`, session.ToolErrInvalidArgs},
	{"MCP error -32603: Internal error", session.ToolErrExecution},
	{"Access denied - path outside allowed directories: /etc/passwd not in /tmp/x", session.ToolErrExecution},
	{"MCP error -32602 without a colon", session.ToolErrExecution},
	{"MCP error x: y", session.ToolErrExecution},
	{"the tool was not found", session.ToolErrExecution},
	{"", session.ToolErrExecution},
}

func TestResultKind(t *testing.T) {
	for _, c := range resultTexts {
		if got := resultKind(c.text); got != c.kind {
			t.Errorf("resultKind(%q) = %s, want %s", c.text, got, c.kind)
		}
	}
}

func TestRPCKind(t *testing.T) {
	for _, c := range []struct {
		err  jsonrpc.Error
		kind string
	}{
		{jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid limit"}, session.ToolErrInvalidArgs},
		{jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `unknown tool "x"`}, session.ToolErrUnknownTool},
		{jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Tool x not found"}, session.ToolErrUnknownTool},
		{jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "unknown tool"}, session.ToolErrExecution},
		{jsonrpc.Error{Code: -32000, Message: "boom"}, session.ToolErrExecution},
	} {
		if got := rpcKind(&c.err); got != c.kind {
			t.Errorf("rpcKind(%d %q) = %s, want %s", c.err.Code, c.err.Message, got, c.kind)
		}
	}
}

func TestUndelivered(t *testing.T) {
	dial := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	reset := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	refusal := fmt.Errorf(`sending "tools/call": %w: %w: Bad Request`, &jsonrpc.Error{Code: -32000, Message: "No valid session ID"}, errRejected)
	transient := fmt.Errorf(`%w: sending "tools/call": Service Unavailable`, errRejected)
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("calling: %w", dial), true},
		{fmt.Errorf("calling: %w", sdk.ErrSessionMissing), true},
		{fmt.Errorf("calling: %w", &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}), true},
		{fmt.Errorf("calling: %w", refusal), true},
		{fmt.Errorf("calling: %w", reset), false},
		{fmt.Errorf("calling: %w", transient), false},
		{&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}, false},
		{sdk.ErrConnectionClosed, false},
		{errors.New("request terminated without response"), false},
	} {
		if got := undelivered(c.err); got != c.want {
			t.Errorf("undelivered(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func FuzzResultKind(f *testing.F) {
	for _, c := range resultTexts {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		switch k := resultKind(text); k {
		case session.ToolErrInvalidArgs, session.ToolErrUnknownTool, session.ToolErrExecution:
		default:
			t.Fatalf("resultKind(%q) = %q", text, k)
		}
		code, msg, ok := parseMCPError(text)
		if !ok {
			return
		}
		again := "MCP error " + strconv.FormatInt(code, 10) + ": " + msg
		if c2, m2, ok := parseMCPError(again); !ok || c2 != code || m2 != msg {
			t.Fatalf("%q parses as %d %q, which renders as %q, which parses as %d %q %v", text, code, msg, again, c2, m2, ok)
		}
		if k := resultKind(text); code != jsonrpc.CodeInvalidParams && k != session.ToolErrExecution {
			t.Fatalf("code %d gave kind %s", code, k)
		}
	})
}

func FuzzObjectArgs(f *testing.F) {
	for _, s := range []string{"", " ", "null", "{}", `{"a":1}`, "[1]", `"x"`, "{", " {\"a\": [1, {}]} "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		out, err := objectArgs(args)
		if err != nil {
			if tool.KindOf(err) != session.ToolErrInvalidArgs {
				t.Fatalf("objectArgs(%q) error %v of kind %s", args, err, tool.KindOf(err))
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(out, &obj); err != nil || obj == nil {
			t.Fatalf("objectArgs(%q) = %q, not an object: %v", args, out, err)
		}
		if trimmed := strings.TrimSpace(string(args)); trimmed != "" && trimmed != "null" && trimmed != string(out) {
			t.Fatalf("objectArgs(%q) = %q, changed", args, out)
		}
	})
}
