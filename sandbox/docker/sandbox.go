package docker

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/moby/moby/client"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/egress"
	"github.com/openrath/rath/session"
)

// Sandbox is a Docker sandbox: a container and its workspace on the host.
type Sandbox struct {
	*sandbox.Workspace
	cli  *client.Client
	id   string
	cid  string // the container's id
	spec session.Spec
	user user
	// dial, if set, replaces the egress proxy's dialer (tests name their
	// servers with it).
	dial egress.Dialer

	// owned is the workspace again, for handing files rath creates to the
	// commands' user (nil when there is no need); mu guards it against
	// Close.
	mu    sync.RWMutex
	owned *os.Root
}

func newSandbox(cli *client.Client, id, cid, dir string, spec session.Spec, u user) (*Sandbox, error) {
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		return nil, err
	}
	s := &Sandbox{Workspace: ws, cli: cli, id: id, cid: cid, spec: spec, user: u}
	if u.handOver {
		if s.owned, err = os.OpenRoot(dir); err != nil {
			ws.CloseWorkspace()
			return nil, fmt.Errorf("docker: workspace %s: %w", dir, err)
		}
	}
	return s, nil
}

// ID implements sandbox.Sandbox.
func (s *Sandbox) ID() string { return s.id }

// Backend implements sandbox.Sandbox.
func (s *Sandbox) Backend() string { return Name }

// ContainerID is the Docker container's id.
func (s *Sandbox) ContainerID() string { return s.cid }

// Capabilities implements sandbox.Sandbox.
func (s *Sandbox) Capabilities() sandbox.Capabilities {
	return sandbox.Capabilities{Isolated: true, NetworkControl: true, Limits: true, Reattach: true, EgressControl: true}
}

// WriteFile implements sandbox.Sandbox; what it creates belongs to the
// commands' user.
func (s *Sandbox) WriteFile(ctx context.Context, p string, data []byte) error {
	if err := s.Workspace.WriteFile(ctx, p, data); err != nil {
		return err
	}
	return s.handOver(p)
}

// Mkdir implements sandbox.Sandbox; what it creates belongs to the
// commands' user.
func (s *Sandbox) Mkdir(ctx context.Context, p string) error {
	if err := s.Workspace.Mkdir(ctx, p); err != nil {
		return err
	}
	return s.handOver(p)
}

func (s *Sandbox) handOver(p string) error {
	name, err := sandbox.Clean(p)
	if err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.owned == nil {
		return nil
	}
	if err := s.user.handOverPath(s.owned, name); err != nil {
		return fmt.Errorf("docker: %s: giving it to uid %d: %w", p, s.user.uid, err)
	}
	return nil
}

// Clone implements sandbox.Sandbox: a copy of the workspace in a new
// directory under sandbox.WorkspacesDir(), in a new container of the same
// spec and user.
func (s *Sandbox) Clone(ctx context.Context) (sandbox.Sandbox, error) {
	id, dir, err := s.CopyToNew(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.user.handOverTree(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	spec := s.spec
	spec.Dir = dir
	c, err := create(ctx, s.cli, id, dir, spec, s.user)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// Close implements sandbox.Sandbox: the container is removed (with any
// command still running in it); the workspace directory stays.
func (s *Sandbox) Close() error {
	if !s.CloseWorkspace() {
		return nil
	}
	s.mu.Lock()
	if s.owned != nil {
		s.owned.Close()
		s.owned = nil
	}
	s.mu.Unlock()
	if err := removeContainer(context.Background(), s.cli, s.cid); err != nil {
		return fmt.Errorf("docker: closing sandbox %s: %w", s.id, err)
	}
	return nil
}
