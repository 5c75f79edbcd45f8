package remotefake

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// LockDir makes dir if needed and takes its lock file (dir/lock, an
// exclusive flock) for a fake that keeps its state there, so that a
// second fake started on the same directory fails instead of serving,
// and overwriting, the first one's state. The lock ends with the process
// or with unlock.
func LockDir(dir string) (unlock func() error, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by another fake", dir)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return f.Close, nil
}

// WriteAtomic replaces the file at path with data: written to a temporary
// file beside it, synced, and renamed over it, so that a reader (or a
// fake started after a crash) sees the old contents or the new, never a
// part.
func WriteAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// SafeID reports whether id can name a directory under a fake's state
// directory: one path element, not . or .., without NUL.
func SafeID(id string) bool {
	return filepath.IsLocal(id) && filepath.Base(id) == id && id != "." && !strings.ContainsRune(id, 0)
}
