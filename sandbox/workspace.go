package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
)

// Workspace is a workspace directory on the host with the file operations
// of Sandbox, confined to it: absolute paths and ".." leading out are
// refused, and every path is resolved component by component under the
// root (os.Root), so a symlink pointing out — or swapped in after a check —
// cannot be followed out. Backends embed it.
type Workspace struct {
	dir  string
	root *os.Root

	mu     sync.RWMutex
	closed bool
}

// OpenWorkspace opens the directory dir (which must exist).
func OpenWorkspace(dir string) (*Workspace, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace %s: %w", dir, err)
	}
	return &Workspace{dir: dir, root: r}, nil
}

// WorkspaceDir returns the host directory.
func (w *Workspace) WorkspaceDir() string { return w.dir }

// CloseWorkspace releases the directory handle; later calls fail with
// ErrClosed. It reports whether this call closed it.
func (w *Workspace) CloseWorkspace() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	w.closed = true
	w.root.Close()
	return true
}

// Closed reports whether CloseWorkspace was called.
func (w *Workspace) Closed() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.closed
}

// Clean checks a workspace path and returns it in the form os.Root takes
// ("." for the root). Absolute paths, "..", NUL bytes and backslashes are
// refused with ErrEscape.
func Clean(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: %q contains a NUL byte", ErrEscape, p)
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':') {
		return "", fmt.Errorf("%w: %q is absolute; paths are relative to the workspace", ErrEscape, p)
	}
	if strings.Contains(p, `\`) {
		return "", fmt.Errorf("%w: %q contains a backslash", ErrEscape, p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: %q climbs out through \"..\"", ErrEscape, p)
	}
	return c, nil
}

// use runs fn with the root unless the workspace is closed, mapping errors
// to the package's sentinels.
func (w *Workspace) use(ctx context.Context, p string, fn func(r *os.Root, name string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name, err := Clean(p)
	if err != nil {
		return err
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrClosed
	}
	return mapFSError(p, fn(w.root, name))
}

func mapFSError(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", ErrNotFound, p)
	case strings.Contains(err.Error(), "escapes from parent"), strings.Contains(err.Error(), "path escapes"):
		return fmt.Errorf("%w: %s (a symlink leads out)", ErrEscape, p)
	}
	return fmt.Errorf("sandbox: %s: %w", p, err)
}

// ReadFile implements Sandbox.
func (w *Workspace) ReadFile(ctx context.Context, p string) ([]byte, error) {
	var data []byte
	err := w.use(ctx, p, func(r *os.Root, name string) (err error) {
		data, err = r.ReadFile(name)
		return err
	})
	return data, err
}

// WriteFile implements Sandbox.
func (w *Workspace) WriteFile(ctx context.Context, p string, data []byte) error {
	return w.use(ctx, p, func(r *os.Root, name string) error {
		if name == "." {
			return fmt.Errorf("%w: cannot write the workspace root as a file", ErrEscape)
		}
		if dir := path.Dir(name); dir != "." {
			if err := r.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		return r.WriteFile(name, data, 0o644)
	})
}

// Stat implements Sandbox.
func (w *Workspace) Stat(ctx context.Context, p string) (FileInfo, error) {
	var fi FileInfo
	err := w.use(ctx, p, func(r *os.Root, name string) error {
		st, err := r.Stat(name)
		if err != nil {
			return err
		}
		fi = infoOf(name, st)
		return nil
	})
	return fi, err
}

// List implements Sandbox.
func (w *Workspace) List(ctx context.Context, p string) ([]FileInfo, error) {
	var out []FileInfo
	err := w.use(ctx, p, func(r *os.Root, name string) error {
		f, err := r.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		ents, err := f.ReadDir(-1)
		if err != nil {
			return err
		}
		for _, e := range ents {
			st, err := e.Info()
			if err != nil {
				continue // removed while listing
			}
			out = append(out, infoOf(path.Join(name, e.Name()), st))
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// Remove implements Sandbox.
func (w *Workspace) Remove(ctx context.Context, p string) error {
	return w.use(ctx, p, func(r *os.Root, name string) error {
		if name == "." {
			return fmt.Errorf("%w: cannot remove the workspace root", ErrEscape)
		}
		if _, err := r.Lstat(name); err != nil {
			return err
		}
		return r.RemoveAll(name)
	})
}

// Mkdir implements Sandbox.
func (w *Workspace) Mkdir(ctx context.Context, p string) error {
	return w.use(ctx, p, func(r *os.Root, name string) error { return r.MkdirAll(name, 0o755) })
}

func infoOf(name string, st fs.FileInfo) FileInfo {
	if name == "." {
		name = ""
	}
	return FileInfo{Path: name, Size: st.Size(), Mode: st.Mode(), ModTime: st.ModTime(), IsDir: st.IsDir()}
}
