package bwrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/egress"
)

// A sandbox with the network on has no network of its own but a
// loopback: its one way out is an egress proxy on the host, whose Unix
// socket is bound into it at egressDir. The running binary, bound at
// bridgePath, is started there as the command's parent (egress.BridgeMain)
// and brings the socket to 127.0.0.1 for it.
const (
	egressDir  = "/run/rath/egress"
	bridgePath = "/run/rath/bridge"
	socketName = "proxy.sock"
)

// The bridge is this binary re-executed inside the sandbox: dispatched
// before main (or a test binary's tests) runs.
func init() {
	if len(os.Args) > 1 && os.Args[1] == egress.BridgeArg {
		egress.BridgeMain(os.Args[2:])
	}
}

// gate is one command's egress: the proxy serving its socket in a
// directory of its own on the host.
type gate struct {
	dir   string // the socket's directory on the host
	exe   string // the binary to run as the bridge
	proxy *egress.Proxy
	done  chan error
}

// openGate starts a proxy deciding with decide (nil: sandbox.AllowAll) on
// a new socket; dial, if set, replaces its dialer.
func openGate(ctx context.Context, decide sandbox.Egress, dial egress.Dialer) (*gate, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bwrap: egress bridge: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return nil, fmt.Errorf("bwrap: egress bridge: %w", err)
	}
	dir, err := os.MkdirTemp("", "rath-egress-")
	if err != nil {
		return nil, fmt.Errorf("bwrap: egress proxy: %w", err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, socketName))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bwrap: egress proxy: %w", err)
	}
	var opts []egress.Option
	if dial != nil {
		opts = append(opts, egress.WithDialer(dial))
	}
	g := &gate{dir: dir, exe: exe, proxy: egress.New(ctx, decide, opts...), done: make(chan error, 1)}
	go func() { g.done <- g.proxy.Serve(ln) }()
	return g, nil
}

// mounts are bwrap's arguments that bring the socket and the bridge in,
// both read-only (connect() needs no write access to a socket's mount).
func (g *gate) mounts() []string {
	return []string{"--ro-bind", g.dir, egressDir, "--ro-bind", g.exe, bridgePath}
}

// wrap is argv started through the bridge.
func (g *gate) wrap(argv []string) []string {
	return append([]string{bridgePath, egress.BridgeArg, egressDir + "/" + socketName, "--"}, argv...)
}

// close stops the proxy, removes the socket, and returns the decisions.
func (g *gate) close() ([]sandbox.Connection, int64, error) {
	err := g.proxy.Close()
	if serr := <-g.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if rerr := os.RemoveAll(g.dir); err == nil {
		err = rerr
	}
	conns, dropped := g.proxy.Connections()
	return conns, dropped, err
}
