package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is one client session with a server, and what is known of its
// health. It is found gone — its life ends, the cause wrapping
// ErrServerGone — when a stdio server's process exits, when the SDK
// connection closes, or when the HTTP watch sees the server unreachable or
// refusing the session. Calls in flight end at once with that cause; the
// next call starts a new session instead of sending into a dead one.
type conn struct {
	name   string
	stderr *tail
	proc   *process // nil over HTTP

	cs   atomic.Pointer[sdk.ClientSession]
	life context.Context
	kill context.CancelCauseFunc

	closing  atomic.Bool // Close began: what ends now is not a failure
	reported atomic.Bool // a call or a restart note told of its end
	probing  atomic.Bool // a ping is checking the server
}

func newConn(name string) *conn {
	cn := &conn{name: name, stderr: &tail{}}
	cn.life, cn.kill = context.WithCancelCause(context.Background())
	return cn
}

// start records the session and watches for its end.
func (cn *conn) start(cs *sdk.ClientSession) {
	cn.cs.Store(cs)
	go func() {
		err := cs.Wait()
		if cn.proc != nil {
			// Prefer the exit status, which comes a moment later.
			select {
			case <-cn.proc.exited:
				return
			case <-time.After(time.Second):
			}
		}
		if err == nil {
			err = errors.New("EOF")
		}
		cn.fail(fmt.Errorf("the connection closed: %w", err))
	}()
	if cn.proc != nil {
		go func() {
			<-cn.proc.exited
			cn.fail(cn.proc.exitCause())
		}()
	}
}

// fail records that the server is gone, for cause; the first cause wins.
// Nothing is recorded once Close has begun.
func (cn *conn) fail(cause error) {
	if cn.closing.Load() {
		return
	}
	cn.kill(asGone(cause))
}

// gone returns why the server is gone, or nil while it is not known to be.
func (cn *conn) gone() error {
	if cn.life.Err() == nil {
		if cn.proc != nil {
			// The watcher may not have run yet.
			if _, ok := cn.proc.hasExited(); ok {
				cn.fail(cn.proc.exitCause())
			}
		}
		if cn.life.Err() == nil {
			return nil
		}
	}
	return context.Cause(cn.life)
}

// note is the end of a stdio server's standard error for an error
// message; when the process has exited it waits a moment for its last
// words.
func (cn *conn) note() string {
	if cn.proc != nil {
		if _, ok := cn.proc.hasExited(); ok {
			select {
			case <-cn.proc.copied:
			case <-time.After(stderrWait):
			}
		}
	}
	return stderrNote(cn.stderr)
}

// settle waits a moment for a stdio server's process to exit after a call
// found the connection lost, so that the exit status is the cause.
func (cn *conn) settle() {
	if cn.proc == nil {
		return
	}
	select {
	case <-cn.proc.exited:
		cn.fail(cn.proc.exitCause())
	case <-time.After(time.Second):
	}
}

// close ends the session and, over stdio, stops the server, and says
// whether that went as it should: nil when the server stopped because this
// side asked (its standard input closed, then SIGTERM and SIGKILL after
// grace periods: a server stopped by our signal is no failure); an error
// wrapping ErrServerGone when the server was already gone before Close and
// no call has said so; an error when a stdio server exits on its own with
// a failure status, or cannot be killed, or when ending an HTTP session
// fails.
func (cn *conn) close(grace time.Duration) error {
	before := cn.gone()
	cn.closing.Store(true)
	cn.kill(ErrClosed) // calls in flight end (no effect if already gone)
	var closeErr error
	if cs := cn.cs.Load(); cs != nil {
		closeErr = cs.Close()
	}
	var status error
	var signalled bool
	var stopErr error
	if cn.proc != nil {
		status, signalled, stopErr = cn.proc.stop(grace)
	}
	switch {
	case before != nil && !cn.reported.Load():
		return fmt.Errorf("mcp: server %s was gone before Close: %w%s", cn.name, before, cn.note())
	case before != nil:
		return nil
	case stopErr != nil:
		return fmt.Errorf("mcp: stopping server %s: %w", cn.name, stopErr)
	case cn.proc != nil && status != nil && !signalled:
		return fmt.Errorf("mcp: server %s failed on close: %w%s", cn.name, status, cn.note())
	case cn.proc == nil && closeErr != nil && !errors.Is(closeErr, sdk.ErrConnectionClosed):
		return fmt.Errorf("mcp: closing server %s: %w", cn.name, closeErr)
	}
	return nil
}
