// Package tool is what a model can call: a name, a description and a JSON
// schema the model sees, and Go behaviour behind them. Func builds a Tool
// from a typed Go function, inferring the schema and validating arguments
// before the function runs. Resources say what a call touches, so an agent
// can run the calls of one step concurrently when they do not conflict.
package tool

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Tool is a callable tool.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema of the arguments (an object schema).
	Schema() json.RawMessage
	// Call runs the tool. Tools made with Func validate the arguments against
	// their schema first; others (MCP tools) leave that to the tool. A returned
	// error becomes an error tool_result (the model sees its message); use
	// an *Error to set its kind. The returned string is the tool's output
	// and is recorded as it is; remarks about the call (a restart, a
	// scrubbed secret) go to env.Note, never into it.
	Call(ctx context.Context, env Env, args json.RawMessage) (string, error)
	// Resources lists what a call with these arguments reads or writes.
	Resources(args json.RawMessage) []Resource
	// Idempotent reports whether repeating a call is harmless (a replay or a
	// resumed run may then re-run it instead of failing it).
	Idempotent() bool
}

// Env is what a call can reach.
type Env struct {
	// Session is the session the call belongs to (up to the assistant turn
	// that made it).
	Session *session.Session
	// Sandbox is the session's sandbox, or nil when it has no placement.
	Sandbox sandbox.Sandbox
	// CallID is the model's id for the call.
	CallID string
	// IdempotencyKey is the same every time this call runs — again after
	// a crash, on another worker — and differs between calls: an
	// idempotent tool with outside effects uses it to do them once.
	IdempotencyKey string
	// Notes receives the call's evidence notes (Env.Note), or is nil when
	// nobody records them. The agent gives every call its own.
	Notes *Notes
}

// Error is a tool failure of a given kind (session.ToolErr*).
type Error struct {
	Kind    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an *Error of the given kind.
func Errorf(kind string, err error, msg string) *Error {
	return &Error{Kind: kind, Message: msg, Err: err}
}

// ErrNoSandbox: a tool needing a sandbox was called on a session without a
// placement.
var ErrNoSandbox = errors.New("tool: the session has no sandbox (place it with session.To)")

// KindOf returns the error kind recorded for err: the *Error's kind, else
// execution (or timeout, or canceled).
func KindOf(err error) string {
	var te *Error
	switch {
	case errors.As(err, &te) && te.Kind != "":
		return te.Kind
	case errors.Is(err, sandbox.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return session.ToolErrTimeout
	case errors.Is(err, context.Canceled):
		return session.ToolErrCanceled
	}
	return session.ToolErrExecution
}

// Spec returns the tool as a model sees it.
func Spec(t Tool) (name, description string, schema json.RawMessage) {
	return t.Name(), t.Description(), t.Schema()
}
