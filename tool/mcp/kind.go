package mcp

import (
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/openrath/rath/session"
)

// A server says that a call's arguments are invalid in one of two ways: a
// JSON-RPC error with code -32602 (invalid params), or — since SEP-1303
// asks for it, so that a model can read the message and correct itself — a
// tool result with isError set whose text says so. The reference servers'
// TypeScript SDK writes such a result as "MCP error -32602: Input validation
// error: ..."; later versions drop the "MCP error" prefix; the Go SDK writes
// `validating "arguments": ...`. The same code also names an unknown tool
// ("Tool x not found", `unknown tool "x"`), which is recorded as such.

// validationPrefixes begin the text of isError results that report invalid
// arguments.
var validationPrefixes = []string{
	"input validation error",
	"invalid arguments for tool",
	`validating "arguments"`,
}

// rpcKind is the error kind of a JSON-RPC error answering tools/call.
func rpcKind(e *jsonrpc.Error) string {
	if e.Code != jsonrpc.CodeInvalidParams {
		return session.ToolErrExecution
	}
	if unknownTool(e.Message) {
		return session.ToolErrUnknownTool
	}
	return session.ToolErrInvalidArgs
}

// resultKind is the error kind of an isError result whose text is text.
func resultKind(text string) string {
	msg := strings.TrimSpace(text)
	if code, rest, ok := parseMCPError(msg); ok {
		if code != jsonrpc.CodeInvalidParams {
			return session.ToolErrExecution
		}
		if unknownTool(rest) {
			return session.ToolErrUnknownTool
		}
		return session.ToolErrInvalidArgs
	}
	lower := strings.ToLower(msg)
	for _, p := range validationPrefixes {
		if strings.HasPrefix(lower, p) {
			return session.ToolErrInvalidArgs
		}
	}
	return session.ToolErrExecution
}

// parseMCPError splits "MCP error <code>: <message>", the TypeScript SDK's
// rendering of a protocol error, into its code and message.
func parseMCPError(s string) (code int64, msg string, ok bool) {
	rest, found := strings.CutPrefix(s, "MCP error ")
	if !found {
		return 0, "", false
	}
	num, msg, found := strings.Cut(rest, ":")
	if !found {
		return 0, "", false
	}
	code, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, "", false
	}
	return code, strings.TrimSpace(msg), true
}

// unknownTool reports whether an invalid-params message says the tool does
// not exist (or is disabled) rather than that its arguments are wrong.
func unknownTool(msg string) bool {
	m := strings.ToLower(strings.TrimSpace(msg))
	if strings.HasPrefix(m, "unknown tool") {
		return true
	}
	rest, ok := strings.CutPrefix(m, "tool ")
	if !ok {
		return false
	}
	for _, suffix := range []string{" not found", " disabled"} {
		if name, ok := strings.CutSuffix(rest, suffix); ok && name != "" && !strings.ContainsAny(name, " \t\n") {
			return true
		}
	}
	return false
}
