package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// probeTimeout bounds the ping that checks a server after a stream broke.
const probeTimeout = time.Second

// The SDK's streamable-HTTP client meets a broken stream by reconnecting
// with backoff (five attempts over 17–22 s) before it gives up, and until
// then a call waits. The HTTP client it is given watches instead: every
// request and response body reports to the conn, which decides at once —
// the server cannot be reached, or refuses the session — or pings the
// server to find out when a stream merely broke.

// watchTransport sends the configured headers and reports what it sees to
// its conn.
type watchTransport struct {
	headers map[string]string
	base    http.RoundTripper
	conn    *conn
}

func (t *watchTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	a, _ := r.Context().Value(attemptKey{}).(*attempt)
	first := a != nil && a.first()
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		if r.Context().Err() == nil {
			if first && dialFailed(err) {
				a.refused.Store(true)
			}
			t.conn.unreachable(err)
		}
		return nil, err
	}
	if r.Header.Get("Mcp-Session-Id") != "" && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest) {
		// 404 is the specification's answer to a session the server does
		// not know; some servers (the reference "everything" server) say
		// 400. Either way the session is lost: a restarted server.
		if first {
			a.refused.Store(true)
		}
		t.conn.fail(fmt.Errorf("the server refused the session (HTTP %d to %s)", resp.StatusCode, r.Method))
	}
	resp.Body = &watchBody{ReadCloser: resp.Body, ctx: r.Context(), conn: t.conn, stream: r.Method == http.MethodGet}
	return resp, nil
}

// attempt follows one call's request through the HTTP client: the SDK
// sends it with the call's context, where attemptKey finds the attempt.
type attempt struct {
	sent    atomic.Bool // the call's request has gone out
	refused atomic.Bool // it never reached the server's handler
}

type attemptKey struct{}

// first reports whether this is the attempt's first request — the call's
// own POST, not a later notification or stream resumption sharing its
// context.
func (a *attempt) first() bool { return a.sent.CompareAndSwap(false, true) }

// dialFailed reports whether err is a failure to connect at all.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// watchBody reports a response body that breaks off, and the end of a
// standalone stream (a GET), which a server ends only when it goes away
// or asks the client to reconnect.
type watchBody struct {
	io.ReadCloser
	ctx    context.Context
	conn   *conn
	stream bool
	closed atomic.Bool
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && (err != io.EOF || b.stream) && b.ctx.Err() == nil && !b.closed.Load() {
		b.conn.broken(err)
	}
	return n, err
}

func (b *watchBody) Close() error {
	b.closed.Store(true)
	return b.ReadCloser.Close()
}

// unreachable: a request to the server failed. A refused or failed dial
// means nothing listens there any more; anything else is checked.
func (cn *conn) unreachable(err error) {
	if cn.probing.Load() || dialFailed(err) {
		cn.fail(fmt.Errorf("cannot reach the server: %w", err))
		return
	}
	cn.broken(err)
}

// answers reports whether the server answers a ping on the session.
func (cn *conn) answers(ctx context.Context) bool {
	cs := cn.cs.Load()
	if cs == nil || cn.life.Err() != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return cs.Ping(ctx, nil) == nil && cn.life.Err() == nil
}

// broken: a response broke off. The server is pinged, at most one ping at a
// time; the ping's own request reports what it finds.
func (cn *conn) broken(error) {
	cs := cn.cs.Load()
	if cs == nil || cn.closing.Load() || cn.life.Err() != nil || !cn.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer cn.probing.Store(false)
		ctx, cancel := context.WithTimeout(cn.life, probeTimeout)
		defer cancel()
		if err := cs.Ping(ctx, nil); errors.Is(err, sdk.ErrConnectionClosed) {
			cn.fail(fmt.Errorf("the connection closed: %w", err))
		}
	}()
}
