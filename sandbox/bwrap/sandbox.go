package bwrap

import (
	"context"
	"fmt"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/egress"
	"github.com/openrath/rath/sandbox/internal/proc"
	"github.com/openrath/rath/session"
)

// Sandbox is a bwrap sandbox: a workspace on the host and a way to run
// commands confined to it.
type Sandbox struct {
	*sandbox.Workspace
	id    string
	spec  session.Spec
	bwrap string // the bwrap binary
	root  string // the root filesystem on the host
	// dial, if set, replaces the egress proxy's dialer (tests name their
	// servers with it).
	dial egress.Dialer
}

func open(id, dir, bwrap, root string, spec session.Spec) (*Sandbox, error) {
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		return nil, err
	}
	return &Sandbox{Workspace: ws, id: id, spec: spec, bwrap: bwrap, root: root}, nil
}

// ID implements sandbox.Sandbox.
func (s *Sandbox) ID() string { return s.id }

// Backend implements sandbox.Sandbox.
func (s *Sandbox) Backend() string { return Name }

// Capabilities implements sandbox.Sandbox. Limits is false: there is no
// CPU limit, and the process limit does not hold for root (see the
// package documentation).
func (s *Sandbox) Capabilities() sandbox.Capabilities {
	return sandbox.Capabilities{Isolated: true, NetworkControl: true, Limits: false, Reattach: true, EgressControl: true}
}

// Exec implements sandbox.Sandbox. Command.Dir must be a directory in the
// workspace, reached without leaving it.
func (s *Sandbox) Exec(ctx context.Context, c sandbox.Command) (sandbox.Result, error) {
	if s.Closed() {
		return sandbox.Result{}, sandbox.ErrClosed
	}
	dir, err := sandbox.Clean(c.Dir)
	if err != nil {
		return sandbox.Result{}, err
	}
	fi, err := s.Stat(ctx, dir)
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("sandbox: working directory %q: %w", c.Dir, err)
	}
	if !fi.IsDir {
		return sandbox.Result{}, fmt.Errorf("sandbox: working directory %q is not a directory", c.Dir)
	}
	inv := invocation{bwrap: s.bwrap, root: s.root, workspace: s.WorkspaceDir(), dir: dir, spec: s.spec, cmd: c}
	if s.spec.Network {
		if inv.gate, err = openGate(ctx, c.Egress, s.dial); err != nil {
			return sandbox.Result{}, err
		}
	}
	argv, env, err := inv.build()
	if err != nil {
		if inv.gate != nil {
			_, _, _ = inv.gate.close()
		}
		return sandbox.Result{}, err
	}
	res, err := proc.Run(ctx, argv, "/", env, c, proc.Timeout(c, s.spec))
	if inv.gate != nil {
		var gerr error
		res.Egress, res.EgressDropped, gerr = inv.gate.close()
		if err == nil && gerr != nil {
			err = fmt.Errorf("bwrap: egress proxy: %w", gerr)
		}
	}
	return res, err
}

// Clone implements sandbox.Sandbox: a copy of the workspace in a new
// directory under sandbox.WorkspacesDir().
func (s *Sandbox) Clone(ctx context.Context) (sandbox.Sandbox, error) {
	id, dir, err := s.CopyToNew(ctx)
	if err != nil {
		return nil, err
	}
	spec := s.spec
	spec.Dir = dir
	return open(id, dir, s.bwrap, s.root, spec)
}

// Close implements sandbox.Sandbox. The workspace directory stays, so the
// sandbox can be attached again; nothing runs between commands.
func (s *Sandbox) Close() error {
	s.CloseWorkspace()
	return nil
}
