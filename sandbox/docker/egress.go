package docker

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/moby/moby/client"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/egress"
)

// A container whose spec has the network on is on Docker's "none" network
// all the same (loopback only): its one way out is an egress proxy rath
// runs for each command, listening on 127.0.0.1 inside the container's
// network namespace (listenIn) and dialling from the host's. The command's
// proxy variables point at it.

// gate is one command's egress proxy.
type gate struct {
	addr  string // the proxy's address inside the container
	proxy *egress.Proxy
	done  chan error
}

// openGate starts a proxy in the container's network namespace deciding
// with decide (nil: sandbox.AllowAll). It fails with sandbox.ErrUnavailable
// when the namespace cannot be entered from here: the network is then not
// given rather than given undecided.
func (s *Sandbox) openGate(ctx context.Context, decide sandbox.Egress) (*gate, error) {
	ins, err := s.cli.ContainerInspect(ctx, s.cid, client.ContainerInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("docker: sandbox %s: inspecting the container: %w", s.id, err)
	}
	if ins.Container.State == nil || ins.Container.State.Pid == 0 {
		return nil, fmt.Errorf("docker: sandbox %s: the container is not running", s.id)
	}
	ln, err := listenIn(ins.Container.State.Pid)
	if err != nil {
		return nil, fmt.Errorf("%w: docker sandbox %s has the network on, but its egress proxy cannot start (rath must run as root on the daemon's host): %w",
			sandbox.ErrUnavailable, s.id, err)
	}
	var opts []egress.Option
	if s.dial != nil {
		opts = append(opts, egress.WithDialer(s.dial))
	}
	g := &gate{addr: ln.Addr().String(), proxy: egress.New(ctx, decide, opts...), done: make(chan error, 1)}
	go func() { g.done <- g.proxy.Serve(ln) }()
	return g, nil
}

// close stops the proxy and returns its decisions.
func (g *gate) close() ([]sandbox.Connection, int64, error) {
	err := g.proxy.Close()
	if serr := <-g.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	conns, dropped := g.proxy.Connections()
	return conns, dropped, err
}
