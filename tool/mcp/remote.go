package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openrath/rath/secret"
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

// Call calls the tool on the server. Its result is the server's content,
// as the server gave it (up to the secrets scrubbed from it); what the
// client has to say about the call goes to env.Note, never into the
// result: that a new session (over stdio, a new process) was started first
// because the server was found gone since the last call, that a call which
// provably never reached the server (its session had just been lost) was
// sent once more on a new session, that secret values were scrubbed.
func (t *remoteTool) Call(ctx context.Context, env tool.Env, args json.RawMessage) (string, error) {
	out, notes, err := t.call(ctx, args)
	// The result, the error and the notes go into the session: the secret
	// values the server was given are scrubbed from them (config.go).
	r := &t.client.redact
	for _, n := range notes {
		env.Note(n.Kind, r.String(n.Text))
	}
	clean, cleanErr := r.String(out), scrub(r, err)
	if clean != out || cleanErr != err {
		env.Note(session.ToolNoteRedacted, fmt.Sprintf("secret values given to mcp server %s were replaced with %q",
			t.client.cfg.Name, secret.Replacement))
	}
	return clean, cleanErr
}

// call calls the tool, returning the notes for its evidence with the
// result or error.
func (t *remoteTool) call(ctx context.Context, args json.RawMessage) (string, []session.ToolNote, error) {
	arguments, err := objectArgs(args)
	if err != nil {
		return "", nil, err
	}
	c := t.client
	var notes []session.ToolNote
	for attempt := 0; ; attempt++ {
		cn, note, err := c.session(ctx, true)
		if note != nil {
			notes = append(notes, *note)
		}
		if attempt > 0 {
			notes = append(notes, session.NewToolNote(session.ToolNoteResent, fmt.Sprintf(
				"the call never reached mcp server %s (its session was lost) and was sent once more on a new session", c.cfg.Name)))
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return "", notes, err
			}
			return "", notes, goneError(c.cfg.Name, asGone(err), "")
		}
		out, retry, err := t.once(ctx, cn, arguments)
		if retry && attempt == 0 {
			continue
		}
		return out, notes, err
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
