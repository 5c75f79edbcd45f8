package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Name is the backend's registry name.
const Name = "docker"

// DefaultImage is the image of a spec that names none; scripts/lib/docker.sh
// builds it from a static busybox.
const DefaultImage = "rath-busybox:latest"

// Limits of a spec that leaves them zero. CPUs have no default limit.
const (
	DefaultMemoryBytes = 2 << 30
	DefaultPIDs        = 512
)

// WorkspacePath is where the workspace is mounted in the container.
const WorkspacePath = "/workspace"

// std is the registered backend; Reap uses it.
var std = &Backend{}

func init() { sandbox.Register(Name, std) }

// Backend opens Docker sandboxes. Its client is made on first use, from
// the environment.
type Backend struct {
	clientOnce sync.Once
	cli        *client.Client
	cliErr     error

	reapOnce sync.Once
}

// client returns the Docker client, made once.
func (b *Backend) client() (*client.Client, error) {
	b.clientOnce.Do(func() {
		b.cli, b.cliErr = client.New(client.FromEnv)
		if b.cliErr != nil {
			b.cliErr = fmt.Errorf("%w: docker client: %w", sandbox.ErrUnavailable, b.cliErr)
		}
	})
	return b.cli, b.cliErr
}

// Available implements sandbox.Backend: the daemon answers a ping.
func (b *Backend) Available(ctx context.Context) error {
	cli, err := b.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("%w: no Docker daemon at %s: %w", sandbox.ErrUnavailable, cli.DaemonHost(), err)
	}
	return nil
}

// ready returns the client, and reaps orphaned containers the first time.
func (b *Backend) ready(ctx context.Context) (*client.Client, error) {
	cli, err := b.client()
	if err != nil {
		return nil, err
	}
	b.reapOnce.Do(func() { _, _ = b.Reap(ctx) })
	return cli, nil
}

// Open implements sandbox.Backend: a new container on the workspace
// spec.Dir, or a new directory under sandbox.WorkspacesDir().
func (b *Backend) Open(ctx context.Context, spec session.Spec) (sandbox.Sandbox, error) {
	cli, err := b.ready(ctx)
	if err != nil {
		return nil, err
	}
	id := sandbox.NewID()
	dir, err := sandbox.WorkspaceFor(id, spec)
	if err != nil {
		return nil, err
	}
	u, err := userFor(dir)
	if err == nil {
		var s *Sandbox
		if s, err = create(ctx, cli, id, dir, spec, u); err == nil {
			return s, nil
		}
	}
	if spec.Dir == "" {
		os.Remove(dir) // the new workspace, if still empty
	}
	return nil, err
}

// Attach implements sandbox.Backend. The container labelled with id is
// used (started if stopped) if its owner is alive; otherwise a new
// container is made on the workspace — the old container's, else spec.Dir
// or sandbox.WorkspacesDir()/id — if that directory exists.
func (b *Backend) Attach(ctx context.Context, id string, spec session.Spec) (sandbox.Sandbox, error) {
	if !sandbox.ValidID(id) {
		return nil, fmt.Errorf("%w: %q is not a sandbox id", sandbox.ErrNotFound, id)
	}
	cli, err := b.ready(ctx)
	if err != nil {
		return nil, err
	}
	dir := spec.Dir
	if dir == "" {
		dir = filepath.Join(sandbox.WorkspacesDir(), id)
	}
	found, err := findContainer(ctx, cli, id)
	if err != nil {
		return nil, err
	}
	if found != nil {
		if ownerAlive(found.Labels) {
			return reuse(ctx, cli, id, found.ID, spec)
		}
		// Its owner is gone: replace it, so that this process owns it.
		if ws := workspaceOf(found.Mounts); ws != "" {
			dir = ws
		}
		if err := removeContainer(ctx, cli, found.ID); err != nil {
			return nil, err
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: docker sandbox %s (no container, and no workspace at %s)", sandbox.ErrNotFound, id, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	u, err := userFor(abs)
	if err != nil {
		return nil, err
	}
	return create(ctx, cli, id, abs, spec, u)
}
