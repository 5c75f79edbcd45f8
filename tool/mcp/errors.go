package mcp

import (
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

// KindServerGone is the tool error kind of a call whose server died, could
// not be reached, or lost the session: the call could not be answered,
// which is neither a timeout nor a failure of the tool itself.
const KindServerGone = session.ToolErrServerGone

// ErrServerGone is wrapped by the errors of calls (and of Close) that found
// the server, or its session, gone.
var ErrServerGone = errors.New("mcp: server gone")

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("mcp: client is closed")

// goneCause is why a server is gone: it reads as err and wraps both err and
// ErrServerGone.
type goneCause struct{ err error }

func (g *goneCause) Error() string   { return g.err.Error() }
func (g *goneCause) Unwrap() []error { return []error{ErrServerGone, g.err} }

// asGone makes err a cause of a server's end (wrapping ErrServerGone).
func asGone(err error) error {
	if errors.Is(err, ErrServerGone) {
		return err
	}
	return &goneCause{err}
}

// goneError is the error of a call that found the server gone; cause wraps
// ErrServerGone, and note is the end of the server's standard error.
func goneError(name string, cause error, note string) *tool.Error {
	msg := fmt.Sprintf("mcp server %s is gone: %v%s", name, cause, note)
	return &tool.Error{Kind: KindServerGone, Message: msg, Err: cause}
}

// serverError is the error of a call the server answered with a failure of
// the given kind.
func serverError(kind, msg string, err error) *tool.Error {
	if kind == "" {
		kind = session.ToolErrExecution
	}
	return &tool.Error{Kind: kind, Message: msg, Err: err}
}

func stderrNote(t *tail) string {
	if t == nil {
		return ""
	}
	if s := t.String(); s != "" {
		return " (stderr: " + s + ")"
	}
	return ""
}
