// Package e2bfake is an in-process E2B (and Cube Sandbox) for tests: the
// control plane's REST API and each sandbox's envd daemon — Connect RPC
// process and filesystem services and the /files route — behind one TLS
// listener with a private CA, routed by host name as E2B's proxy routes
// them (https://api.DOMAIN, https://49983-ID.DOMAIN).
//
// It follows the published specifications, not the client's assumptions:
// the control plane after E2B's OpenAPI spec (e2b-dev/infra spec/openapi.yml,
// info.version 0.1.0, at 54693ff), envd's HTTP routes after its OpenAPI
// spec (packages/envd/spec/envd.yaml, 0.1.3) and its Connect services
// after the process and filesystem protos, compiled at start (spec/), so
// every message is checked against the schema and written as canonical
// Protobuf JSON. Request bodies with fields the spec does not have are
// refused.
//
// A sandbox is a directory on this host (its user's home is
// DIR/ID/home/user) and its commands are real local processes, so exec
// and file semantics are real; nothing isolates them from the host.
// With Options.Dir, the sandboxes and snapshots outlive the fake (and its
// process): a fake started again on the directory serves them.
// Faults — refusals with Retry-After, broken streams, expiry — are
// injected with Inject and Expire.
package e2bfake

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/openrath/rath/sandbox/remote/remotefake"
)

// Options configure the fake.
type Options struct {
	// Domain is the sandboxes' domain (default "e2b.test").
	Domain string
	// APIKey, if set, is required in X-API-Key.
	APIKey string
	// Cube serves as Cube Sandbox does: no fork, snapshots or set-timeout.
	Cube bool
	// NoFork leaves the fork route out (an E2B deployment older than it).
	NoFork bool
	// Templates are the template ids create accepts (default "base").
	Templates []string
	// Dir is where the sandboxes and the fake's state live, kept across
	// Start and Close, so that a fake started again on it serves the
	// sandboxes and snapshots a process that died (or closed the fake)
	// left (see state.go). One fake at a time may use it. Empty: a
	// temporary directory, removed with every sandbox on Close.
	Dir string
}

// Server is a running fake.
type Server struct {
	opts  Options
	sc    *schema
	dir   string
	ln    net.Listener
	srv   *http.Server
	caPEM []byte
	api   http.Handler

	// keep: dir is Options.Dir, its state file kept up to date; unlock
	// releases its lock.
	keep   bool
	unlock func() error

	mu        sync.Mutex
	boxes     map[string]*box
	snapshots map[string]string // snapshot id -> saved home
	closed    bool              // Close began: the state file is left as it is
	faults    remotefake.Faults

	// Ledger counts requests by URL path and the time ServeHTTP spent on
	// them (Requests, Handling).
	remotefake.Ledger
}

// Start starts a fake on a loopback port.
func Start(o Options) (*Server, error) {
	if o.Domain == "" {
		o.Domain = "e2b.test"
	}
	if len(o.Templates) == 0 {
		o.Templates = []string{"base"}
	}
	sc, err := loadSchema()
	if err != nil {
		return nil, err
	}
	caPEM, leaf, err := certs(o.Domain)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, sc: sc, dir: o.Dir, keep: o.Dir != "", caPEM: caPEM, boxes: map[string]*box{}, snapshots: map[string]string{}}
	if s.keep {
		if s.dir, err = filepath.Abs(s.dir); err != nil {
			return nil, err
		}
		if s.unlock, err = remotefake.LockDir(s.dir); err != nil {
			return nil, fmt.Errorf("e2bfake: %w", err)
		}
	} else if s.dir, err = os.MkdirTemp("", "e2bfake-"); err != nil {
		return nil, err
	}
	if s.ln, err = net.Listen("tcp", "127.0.0.1:0"); err == nil {
		err = s.load()
	}
	if err != nil {
		if s.ln != nil {
			_ = s.ln.Close()
		}
		s.release()
		return nil, err
	}
	ln := s.ln
	s.api = s.apiMux()
	s.srv = &http.Server{Handler: s, TLSConfig: &tls.Config{Certificates: []tls.Certificate{leaf}}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.ServeTLS(ln, "", "") }()
	return s, nil
}

// Close stops the fake and every sandbox's processes. Without
// Options.Dir, it also ends the sandboxes and removes their files; with
// it, the sandboxes and snapshots stay there, for a fake started again on
// it to serve.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	s.mu.Lock()
	boxes := s.boxes
	s.boxes, s.closed = map[string]*box{}, true
	s.mu.Unlock()
	for _, b := range boxes {
		if s.keep {
			b.halt()
		} else {
			b.kill()
		}
	}
	s.release()
	return err
}

// release gives up the fake's directory: removed if it is a temporary
// one, unlocked if it is Options.Dir.
func (s *Server) release() {
	if !s.keep {
		_ = os.RemoveAll(s.dir)
	} else if s.unlock != nil {
		_ = s.unlock()
	}
}

// URL is the control plane's base URL.
func (s *Server) URL() string { return "https://api." + s.opts.Domain }

// Domain is the sandboxes' domain.
func (s *Server) Domain() string { return s.opts.Domain }

// CAPEM is the fake's CA certificate, PEM-encoded.
func (s *Server) CAPEM() []byte { return s.caPEM }

// Transport returns a transport that reaches the fake for every host name
// under its domain (there is no DNS for them) and, with trust, trusts its
// CA; without, the client must be given the CA (Cube's CA bundle).
func (s *Server) Transport(trust bool) *http.Transport {
	addr := s.ln.Addr().String()
	d := &net.Dialer{Timeout: 5 * time.Second}
	t := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		TLSClientConfig:     &tls.Config{},
	}
	if trust {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(s.caPEM)
		t.TLSClientConfig.RootCAs = pool
	}
	return t
}

// ServeHTTP routes by host: the API, a sandbox's envd, or the proxy's
// answer for a sandbox it does not know. The time each request spends in
// it is added up by path (see Handling).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.Done(r.URL.Path, time.Now())
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if f := s.fault(r); f != nil {
		refuse(w, f)
		return
	}
	switch {
	case host == "api."+s.opts.Domain:
		s.api.ServeHTTP(w, r)
	case host == "sandbox."+s.opts.Domain && r.Header.Get("E2b-Sandbox-Port") == "49983":
		s.serveEnvd(w, r, r.Header.Get("E2b-Sandbox-Id"))
	case strings.HasPrefix(host, "49983-") && strings.HasSuffix(host, "."+s.opts.Domain):
		s.serveEnvd(w, r, strings.TrimSuffix(strings.TrimPrefix(host, "49983-"), "."+s.opts.Domain))
	default:
		writeJSON(w, http.StatusBadGateway, map[string]any{"message": "unknown host " + host, "code": 502})
	}
}
