package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// Call calls the tool on the server. If the server was found gone since
// the last call, a new session (over stdio, a new process) is started
// first, and the result (or error) begins with a note saying so. A call
// that provably never reached the server (its session had just been lost)
// is sent once more on a new session.
func (t *remoteTool) Call(ctx context.Context, _ tool.Env, args json.RawMessage) (string, error) {
	out, err := t.call(ctx, args)
	// The result and error go into the session: the secret values the
	// server was given are scrubbed from them (config.go).
	return t.client.redact.String(out), scrub(&t.client.redact, err)
}

func (t *remoteTool) call(ctx context.Context, args json.RawMessage) (string, error) {
	arguments, err := objectArgs(args)
	if err != nil {
		return "", err
	}
	c := t.client
	var notes []string
	for attempt := 0; ; attempt++ {
		cn, note, err := c.session(ctx, true)
		if note != "" {
			notes = append(notes, note)
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return "", err
			}
			return "", withNotes(notes, goneError(c.cfg.Name, asGone(err), ""))
		}
		out, retry, err := t.once(ctx, cn, arguments)
		if retry && attempt == 0 {
			continue
		}
		if err != nil {
			return "", withNotes(notes, err)
		}
		return joinNotes(notes, out), nil
	}
}

// once sends the call on cn. retry reports that the call never reached the
// server and cn is now known gone.
func (t *remoteTool) once(ctx context.Context, cn *conn, arguments json.RawMessage) (out string, retry bool, err error) {
	c := t.client
	timeout := c.cfg.callTimeout()
	timed, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The call ends as soon as the server is found gone.
	att := &attempt{}
	callCtx, stop := context.WithCancelCause(context.WithValue(timed, attemptKey{}, att))
	defer stop(nil)
	defer context.AfterFunc(cn.life, func() { stop(context.Cause(cn.life)) })()

	res, err := cn.cs.Load().CallTool(callCtx, &sdk.CallToolParams{Name: t.name, Arguments: arguments})
	if err == nil {
		out, err := t.result(res)
		return out, false, err
	}
	switch {
	case ctx.Err() != nil:
		return "", false, fmt.Errorf("mcp tool %s: %w", t.Name(), ctx.Err())
	case att.refused.Load() || undelivered(err):
		cn.fail(err)
		return "", true, t.gone(cn)
	case errors.Is(cn.gone(), ErrClosed):
		return "", false, fmt.Errorf("mcp tool %s: %w", t.Name(), ErrClosed)
	case cn.gone() != nil:
	case timed.Err() != nil:
		return "", false, &tool.Error{Kind: session.ToolErrTimeout,
			Message: fmt.Sprintf("mcp tool %s timed out after %s", t.Name(), timeout), Err: err}
	case lost(err):
		if cn.proc == nil && cn.answers(ctx) {
			// The call's response was lost, the server was not.
			return "", false, serverError(session.ToolErrExecution, fmt.Sprintf("mcp tool %s: %v", t.Name(), err), err)
		}
		cn.settle()
		cn.fail(err)
	default:
		kind := session.ToolErrExecution
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			kind = rpcKind(we)
		}
		return "", false, serverError(kind, fmt.Sprintf("mcp tool %s: %v", t.Name(), err), err)
	}
	return "", false, t.gone(cn)
}

// gone is the error of a call that found cn gone.
func (t *remoteTool) gone(cn *conn) *tool.Error {
	cn.reported.Store(true)
	return goneError(t.client.cfg.Name, cn.gone(), cn.note())
}

// result renders a server's answer; an isError result becomes an error
// whose kind the text tells (invalid arguments, unknown tool, or
// execution).
func (t *remoteTool) result(res *sdk.CallToolResult) (string, error) {
	text := render(res)
	if !res.IsError {
		return text, nil
	}
	if text == "" {
		text = fmt.Sprintf("mcp tool %s failed", t.Name())
	}
	return "", serverError(resultKind(text), text, nil)
}

// withNotes puts notes before the message of err.
func withNotes(notes []string, err error) error {
	if len(notes) == 0 {
		return err
	}
	var te *tool.Error
	if errors.As(err, &te) {
		cp := *te
		cp.Message = joinNotes(notes, te.Message)
		return &cp
	}
	return fmt.Errorf("%s: %w", strings.Join(notes, " "), err)
}

func joinNotes(notes []string, text string) string {
	if len(notes) == 0 {
		return text
	}
	return strings.Join(append(notes, text), "\n")
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
