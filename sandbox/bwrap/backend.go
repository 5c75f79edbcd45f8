package bwrap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Name is the backend's registry name.
const Name = "bwrap"

func init() { sandbox.Register(Name, Backend{}) }

// Backend opens bwrap sandboxes.
type Backend struct{}

// Available implements sandbox.Backend: bwrap must be installed and able
// to create the sandbox's namespaces here. The first call runs it once to
// find out; the answer is kept for the life of the process.
func (Backend) Available(ctx context.Context) error {
	_, err := available(ctx)
	return err
}

// Open implements sandbox.Backend. The workspace is spec.Dir, or a new
// directory under sandbox.WorkspacesDir().
func (Backend) Open(ctx context.Context, spec session.Spec) (sandbox.Sandbox, error) {
	bwrap, root, err := prepare(ctx, spec)
	if err != nil {
		return nil, err
	}
	id := sandbox.NewID()
	dir, err := sandbox.WorkspaceFor(id, spec)
	if err != nil {
		return nil, err
	}
	return open(id, dir, bwrap, root, spec)
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
		return nil, fmt.Errorf("%w: bwrap sandbox %s (no workspace at %s)", sandbox.ErrNotFound, id, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	bwrap, root, err := prepare(ctx, spec)
	if err != nil {
		return nil, err
	}
	return open(id, abs, bwrap, root, spec)
}

// prepare checks that bwrap works and finds the root filesystem.
func prepare(ctx context.Context, spec session.Spec) (bwrap, root string, err error) {
	if bwrap, err = available(ctx); err != nil {
		return "", "", err
	}
	if root, err = rootFS(spec.Image); err != nil {
		return "", "", err
	}
	return bwrap, root, nil
}

// rootFS returns the sandbox's root filesystem on the host: "/", or
// image, which must be a directory with a /bin/sh.
func rootFS(image string) (string, error) {
	if image == "" {
		return "/", nil
	}
	abs, err := filepath.Abs(image)
	if err != nil {
		return "", fmt.Errorf("bwrap: image %q: %w", image, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("bwrap: image %q must be a root filesystem directory on the host", image)
	}
	for _, sh := range []string{"bin/sh", "usr/bin/sh"} {
		if _, err := os.Lstat(filepath.Join(abs, sh)); err == nil {
			return abs, nil
		}
	}
	return "", fmt.Errorf("bwrap: image %q has no /bin/sh, which commands start through", image)
}
