// Package local runs tools in a directory on the host. File operations are
// confined to the workspace (absolute paths, ".." and symlinks leading out
// are refused with sandbox.ErrEscape); commands run in the workspace with a
// scrubbed environment (PATH, HOME=workspace, LANG, the spec's env, never
// the host's other variables) in their own process group, which a timeout
// kills whole.
//
// It is not a security boundary: a command can read and write anything the
// user running rath can. Use sandbox/bwrap or sandbox/docker for code you
// do not trust.
package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/internal/proc"
	"github.com/openrath/rath/session"
)

// Name is the backend's registry name.
const Name = "local"

func init() { sandbox.Register(Name, Backend{}) }

// Backend opens local sandboxes.
type Backend struct{}

// Available implements sandbox.Backend: the host can always run it.
func (Backend) Available(context.Context) error { return nil }

// Open implements sandbox.Backend. The workspace is spec.Dir, or a new
// directory under sandbox.WorkspacesDir().
func (Backend) Open(ctx context.Context, spec session.Spec) (sandbox.Sandbox, error) {
	id := sandbox.NewID()
	dir, err := sandbox.WorkspaceFor(id, spec)
	if err != nil {
		return nil, err
	}
	return open(id, dir, spec)
}

// Attach implements sandbox.Backend: a sandbox whose workspace is
// spec.Dir, or WorkspacesDir()/id, is found again if that directory exists.
func (Backend) Attach(ctx context.Context, id string, spec session.Spec) (sandbox.Sandbox, error) {
	if !sandbox.ValidID(id) {
		return nil, fmt.Errorf("%w: %q is not a sandbox id", sandbox.ErrNotFound, id)
	}
	dir := spec.Dir
	if dir == "" {
		dir = filepath.Join(sandbox.WorkspacesDir(), id)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: local sandbox %s (no workspace at %s)", sandbox.ErrNotFound, id, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return open(id, abs, spec)
}

func open(id, dir string, spec session.Spec) (*Sandbox, error) {
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		return nil, err
	}
	return &Sandbox{Workspace: ws, id: id, spec: spec}, nil
}

// Sandbox is a local sandbox.
type Sandbox struct {
	*sandbox.Workspace
	id   string
	spec session.Spec
}

// ID implements sandbox.Sandbox.
func (s *Sandbox) ID() string { return s.id }

// Backend implements sandbox.Sandbox.
func (s *Sandbox) Backend() string { return Name }

// Capabilities implements sandbox.Sandbox: nothing is isolated.
func (s *Sandbox) Capabilities() sandbox.Capabilities { return sandbox.Capabilities{Reattach: true} }

// Exec implements sandbox.Sandbox.
func (s *Sandbox) Exec(ctx context.Context, c sandbox.Command) (sandbox.Result, error) {
	if s.Closed() {
		return sandbox.Result{}, sandbox.ErrClosed
	}
	argv, err := proc.Argv(c)
	if err != nil {
		return sandbox.Result{}, err
	}
	dir, err := sandbox.Clean(c.Dir)
	if err != nil {
		return sandbox.Result{}, err
	}
	// The working directory must stay inside: resolve it through the root.
	if _, err := s.Stat(ctx, dir); err != nil {
		return sandbox.Result{}, fmt.Errorf("sandbox: working directory %q: %w", c.Dir, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(s.WorkspaceDir(), dir))
	if err != nil {
		return sandbox.Result{}, err
	}
	env := proc.Env(s.spec, s.WorkspaceDir(), c)
	return proc.Run(ctx, argv, real, env, c, proc.Timeout(c, s.spec))
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
	return open(id, dir, spec)
}

// Close implements sandbox.Sandbox. The workspace directory stays.
func (s *Sandbox) Close() error {
	s.CloseWorkspace()
	return nil
}
