package osfake

import (
	"context"
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

// ExecdPort is the port execd listens on inside a sandbox.
const ExecdPort = 44772

// Options configure the fake.
type Options struct {
	// APIKey, if set, is required in the OPEN-SANDBOX-API-KEY header of
	// lifecycle requests.
	APIKey string
	// AccessToken, if set, is required in the X-EXECD-ACCESS-TOKEN header
	// of execd requests, and endpoints carry it in their headers.
	AccessToken string
	// PendingFor is how long a new sandbox stays Pending (default 0: the
	// create response says Pending, the next request sees Running).
	PendingFor time.Duration
	// StuckPending keeps new sandboxes Pending for ever.
	StuckPending bool
	// NoSnapshots serves as a runtime without snapshot support: creating
	// a snapshot answers 501.
	NoSnapshots bool
	// SnapshotFor is how long a new snapshot stays Creating (default 0:
	// Ready from the next request on).
	SnapshotFor time.Duration
	// Images are the image URIs that start (default: any). A sandbox from
	// another image becomes Failed.
	Images []string
	// KeepTerminated is how long a deleted or expired sandbox stays
	// visible, as Terminated, to get and list (default 0: gone at once).
	KeepTerminated time.Duration
	// Dir is where the sandboxes, the snapshots and the fake's state
	// live, kept across Start and Close, so that a fake started again on
	// it serves the sandboxes and snapshots a process that died (or
	// closed the fake) left (see state.go). One fake at a time may use
	// it. Empty: a temporary directory, removed with every sandbox on
	// Close.
	Dir string
}

// Server is a running fake.
type Server struct {
	opts Options
	dir  string
	ln   net.Listener
	srv  *http.Server
	api  http.Handler // the lifecycle API
	exec http.Handler // execd's routes

	// keep: dir is Options.Dir, its state file kept up to date; unlock
	// releases its lock.
	keep   bool
	unlock func() error

	mu        sync.Mutex
	boxes     map[string]*box
	snapshots map[string]*snapshot
	closed    bool // Close began: the state file is left as it is
	faults    remotefake.Faults

	// Ledger counts requests by URL path and the time ServeHTTP spent on
	// them (Requests, Handling).
	remotefake.Ledger
}

// Start starts a fake on a loopback port.
func Start(o Options) (*Server, error) {
	s := &Server{opts: o, dir: o.Dir, keep: o.Dir != "", boxes: map[string]*box{}, snapshots: map[string]*snapshot{}}
	var err error
	if s.keep {
		if s.dir, err = filepath.Abs(s.dir); err != nil {
			return nil, err
		}
		if s.unlock, err = remotefake.LockDir(s.dir); err != nil {
			return nil, fmt.Errorf("osfake: %w", err)
		}
	} else if s.dir, err = os.MkdirTemp("", "osfake-"); err != nil {
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
	s.api, s.exec = s.lifecycleMux(), s.execdMux()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the fake and every sandbox's processes. Without
// Options.Dir, it also ends the sandboxes and removes their files; with
// it, the sandboxes and snapshots stay there, for a fake started again on
// it to serve.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, b := range s.boxes {
		if s.keep {
			b.halt()
		} else {
			b.kill()
		}
	}
	s.boxes = map[string]*box{}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
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

// URL is the lifecycle API's base URL, http://127.0.0.1:PORT/v1.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// host is the listener's address, the endpoints' host.
func (s *Server) host() string { return s.ln.Addr().String() }

// ServeHTTP routes a request: the lifecycle API under /v1, a sandbox's
// port under /sandboxes/ID/port/PORT.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer s.Done(r.URL.Path, time.Now())
	if rest, ok := strings.CutPrefix(r.URL.Path, "/v1/"); ok {
		route := "/" + rest
		if f := s.fault(r, route); f != nil {
			refuse(w, f)
			return
		}
		s.api.ServeHTTP(w, r)
		return
	}
	if id, port, route, ok := splitProxyPath(r.URL.Path); ok {
		if f := s.fault(r, route); f != nil {
			refuse(w, f)
			return
		}
		s.serveProxy(w, r, id, port, route)
		return
	}
	s.Arrived(r.URL.Path)
	writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"}) // FastAPI's answer
}

// splitProxyPath splits /sandboxes/ID/port/PORT/REST into its parts; route
// is /REST.
func splitProxyPath(p string) (id, port, route string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/sandboxes/")
	if !ok {
		return "", "", "", false
	}
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 3 || parts[0] == "" || parts[1] != "port" {
		return "", "", "", false
	}
	route = "/"
	if len(parts) == 4 {
		route += parts[3]
	}
	return parts[0], parts[2], route, true
}
