package sandbox

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CopyTree copies the directory tree src into dst (created; it must not
// exist or be empty), keeping modes and symlinks as they are (a symlink is
// copied, never followed). Regular files are reflinked where the
// filesystem can (btrfs, xfs), else copied with copy_file_range.
func CopyTree(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("sandbox: clone: %w", err)
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if rel == "." {
				return os.Chmod(dst, info.Mode().Perm())
			}
			return os.Mkdir(to, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // sockets, fifos, devices: not part of a workspace copy
	})
	if err != nil {
		return fmt.Errorf("sandbox: clone %s: %w", src, err)
	}
	return nil
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) != nil {
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, perm) // O_CREATE's perm passed through the umask
}

// CopyToNew copies the workspace into a fresh directory under
// WorkspacesDir() for a new sandbox id: the shared half of every backend's
// Clone. It fails with ErrClosed on a closed workspace and leaves nothing
// behind on failure.
func (w *Workspace) CopyToNew(ctx context.Context) (id, dir string, err error) {
	if w.Closed() {
		return "", "", ErrClosed
	}
	id = NewID()
	if dir, err = cloneDir(id); err != nil {
		return "", "", err
	}
	if err := CopyTree(ctx, w.WorkspaceDir(), dir); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return id, dir, nil
}
