package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// remoteTool is one tool of an MCP server.
type remoteTool struct {
	client      *Client
	name        string // the server's name for the tool
	description string
	schema      json.RawMessage
	idempotent  bool
}

var _ tool.Tool = (*remoteTool)(nil)

func (t *remoteTool) Name() string            { return t.client.cfg.Prefix + t.name }
func (t *remoteTool) Description() string     { return t.description }
func (t *remoteTool) Schema() json.RawMessage { return t.schema }
func (t *remoteTool) Idempotent() bool        { return t.idempotent }

// Resources serialises the calls to one server.
func (t *remoteTool) Resources(json.RawMessage) []tool.Resource {
	return []tool.Resource{{Access: tool.Write, Key: "mcp:" + t.client.cfg.Name}}
}

// Call calls the tool on the server, starting a new session if the last was
// lost.
func (t *remoteTool) Call(ctx context.Context, _ tool.Env, args json.RawMessage) (string, error) {
	arguments, err := objectArgs(args)
	if err != nil {
		return "", err
	}
	c := t.client
	cn, err := c.session(ctx)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return "", err
		}
		return "", &tool.Error{Kind: session.ToolErrExecution,
			Message: fmt.Sprintf("mcp server %s is gone: %v", c.cfg.Name, err), Err: err}
	}
	timeout := c.cfg.callTimeout()
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cn.cs.CallTool(callCtx, &sdk.CallToolParams{Name: t.name, Arguments: arguments})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return "", fmt.Errorf("mcp tool %s: %w", t.Name(), ctx.Err())
	case callCtx.Err() != nil:
		return "", &tool.Error{Kind: session.ToolErrTimeout,
			Message: fmt.Sprintf("mcp tool %s timed out after %s", t.Name(), timeout), Err: err}
	case lost(callCtx, err):
		return "", c.goneError(cn, err)
	default:
		return "", &tool.Error{Kind: session.ToolErrExecution,
			Message: fmt.Sprintf("mcp tool %s: %v", t.Name(), err), Err: err}
	}
	text := render(res)
	if res.IsError {
		if text == "" {
			text = fmt.Sprintf("mcp tool %s failed", t.Name())
		}
		return "", &tool.Error{Kind: session.ToolErrExecution, Message: text}
	}
	return text, nil
}

// objectArgs checks args is a JSON object; blank or null args are {}.
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, &tool.Error{Kind: session.ToolErrInvalidArgs, Message: "mcp: arguments must be a JSON object"}
	}
	return json.RawMessage(trimmed), nil
}
