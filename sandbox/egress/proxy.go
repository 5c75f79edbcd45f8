package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/openrath/rath/sandbox"
)

// Bounds on what a client of the proxy can make it hold.
const (
	// MaxHeaderBytes bounds a request's head (request line and headers).
	MaxHeaderBytes = 16 << 10
	// HeaderTimeout bounds the time a client takes to send a request's
	// head (slowloris), and an idle connection's wait for the next one.
	HeaderTimeout = 10 * time.Second
	// DialTimeout bounds the proxy's connect to an allowed target.
	DialTimeout = 15 * time.Second
	// MaxConns bounds the connections the proxy serves at once; more wait
	// to be accepted.
	MaxConns = 256
)

// Dialer dials an allowed target; the proxy resolves names through it.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Proxy is an HTTP forward proxy whose every connection is decided first.
// Its zero value is not usable: see New.
type Proxy struct {
	ctx    context.Context
	decide sandbox.Egress
	dial   Dialer
	srv    *http.Server
	http   *http.Transport
	rec    recorder

	headerTimeout time.Duration

	mu      sync.Mutex
	tunnels map[net.Conn]struct{} // hijacked connections, closed by Close
	closed  bool
}

// Option configures a Proxy.
type Option func(*Proxy)

// WithDialer makes the proxy dial allowed targets with d instead of a
// net.Dialer (tests name their servers with it).
func WithDialer(d Dialer) Option { return func(p *Proxy) { p.dial = d } }

// WithHeaderTimeout replaces HeaderTimeout (d > 0).
func WithHeaderTimeout(d time.Duration) Option {
	return func(p *Proxy) {
		if d > 0 {
			p.headerTimeout = d
		}
	}
}

// New returns a proxy deciding each connection with decide (nil:
// sandbox.AllowAll) under ctx, which also bounds every dial.
func New(ctx context.Context, decide sandbox.Egress, opts ...Option) *Proxy {
	if decide == nil {
		decide = sandbox.AllowAll
	}
	d := &net.Dialer{Timeout: DialTimeout}
	p := &Proxy{ctx: ctx, decide: decide, dial: d.DialContext, tunnels: map[net.Conn]struct{}{}, headerTimeout: HeaderTimeout}
	for _, o := range opts {
		o(p)
	}
	p.http = &http.Transport{
		Proxy:               nil,
		DialContext:         p.dial,
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: p.headerTimeout,
		IdleTimeout:       p.headerTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          log.New(io.Discard, "", 0),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	return p
}

// Serve accepts connections on ln until Close; it returns
// http.ErrServerClosed then.
func (p *Proxy) Serve(ln net.Listener) error {
	return p.srv.Serve(limit(ln, MaxConns))
}

// Close stops the proxy: the listener, every request and every tunnel.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.http.CloseIdleConnections()
	return err
}

// Connections returns the decisions made so far, in order (the first
// sandbox.MaxConnections), and how many more were made.
func (p *Proxy) Connections() ([]sandbox.Connection, int64) { return p.rec.list() }

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		p.forward(w, r)
	case r.URL.IsAbs():
		refuse(w, http.StatusBadRequest, "scheme "+strconv.Quote(r.URL.Scheme)+" is not proxied (use CONNECT)")
	default:
		refuse(w, http.StatusBadRequest, "not a proxy request (absolute URL or CONNECT expected)")
	}
}

// allow decides host:port and records the decision.
func (p *Proxy) allow(host string, port int) sandbox.Verdict {
	v := p.decide(p.ctx, host, port)
	p.rec.add(sandbox.Connection{Time: time.Now().UTC(), Host: host, Port: port, Allowed: v.Allow, Rule: v.Rule, Reason: v.Reason})
	return v
}

// connect serves CONNECT host:port: a tunnel, once allowed.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := ParseTarget(r.Host, 0)
	if err != nil {
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if v := p.allow(host, port); !v.Allow {
		refuse(w, http.StatusForbidden, refusal(host, port, v))
		return
	}
	// The proxy's context, not the request's: a client may half-close its
	// side once it has sent what it had, which ends the request's.
	up, err := p.dial(p.ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		refuse(w, http.StatusBadGateway, "cannot reach "+net.JoinHostPort(host, strconv.Itoa(port))+": "+oneLine(err))
		return
	}
	rc := http.NewResponseController(w)
	down, buf, err := rc.Hijack()
	if err != nil {
		up.Close()
		refuse(w, http.StatusInternalServerError, "cannot tunnel: "+oneLine(err))
		return
	}
	if !p.hold(down, up) {
		return
	}
	defer p.release(down, up)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	var in io.Reader = down
	if n := buf.Reader.Buffered(); n > 0 {
		in = io.MultiReader(io.LimitReader(buf.Reader, int64(n)), down)
	}
	splice(down, in, up)
}

// forward serves a plain HTTP request in absolute form, once its host is
// allowed.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	host, port, err := ParseTarget(r.URL.Host, 80)
	if err != nil {
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if v := p.allow(host, port); !v.Allow {
		refuse(w, http.StatusForbidden, refusal(host, port, v))
		return
	}
	out := r.Clone(p.ctx) // not r's context: a half-close of the client's side ends it
	out.RequestURI = ""
	out.URL.Host = net.JoinHostPort(host, strconv.Itoa(port))
	dropHop(out.Header)
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := p.http.RoundTrip(out)
	if err != nil {
		refuse(w, http.StatusBadGateway, "cannot reach "+out.URL.Host+": "+oneLine(err))
		return
	}
	defer resp.Body.Close()
	dropHop(resp.Header)
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// hold registers a tunnel's two ends so Close can end it; false if the
// proxy is closed already (both are closed then).
func (p *Proxy) hold(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		a.Close()
		b.Close()
		return false
	}
	p.tunnels[a], p.tunnels[b] = struct{}{}, struct{}{}
	return true
}

func (p *Proxy) release(a, b net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, a)
	delete(p.tunnels, b)
	p.mu.Unlock()
	a.Close()
	b.Close()
}

// hopHeaders are the headers of one hop, never passed on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func dropHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range splitList(f) {
			h.Del(name)
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// refuse answers with status and a one-line reason, and closes the
// connection.
func refuse(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	fmt.Fprintf(w, "rath egress: %s\n", oneLine(errors.New(reason)))
}

// refusal is the reason a refused client is given.
func refusal(host string, port int, v sandbox.Verdict) string {
	s := "refused " + net.JoinHostPort(host, strconv.Itoa(port))
	if v.Rule != "" {
		s += " by rule " + v.Rule
	}
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	return s
}
