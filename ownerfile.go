package rath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openrath/rath/session"
)

// Ownership by lock file (a store other than PostgreSQL: the embedded
// SQLite store, shared by the processes of one machine). The owner holds
// an open file description lock (fcntl F_OFD_SETLK) on <home>/runs/<run>.lock
// for as long as it runs the run. The kernel drops the lock the moment the
// process dies — SIGKILL included, and nothing survives a reboot — so a
// lock that is not held means an owner that is gone. A reader tests the
// lock with F_OFD_GETLK, which takes nothing: checking never gets in the
// way of an owner taking the lock. (Open file description locks conflict
// between descriptions in one process too, unlike classic fcntl locks.)

// fileLock is a run's lock file, locked by this process.
type fileLock struct {
	f    *os.File
	path string
}

// lockPath is the lock file of run: the one its last owner recorded when
// that file's directory is here (so every process of this machine locks
// the same file, whatever its home), else one under home.
func lockPath(home string, run session.ID, prev *Owner) (string, error) {
	if prev != nil && prev.Lock == LockFile && prev.Path != "" {
		if st, err := os.Stat(filepath.Dir(prev.Path)); err == nil && st.IsDir() {
			return prev.Path, nil
		}
	}
	dir, err := filepath.Abs(filepath.Join(home, "runs"))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("rath: lock directory: %w", err)
	}
	return filepath.Join(dir, string(run)+".lock"), nil
}

// lockFileAt takes the lock at path without waiting: ErrRunLive if
// another open file description holds it.
func lockFileAt(path string) (*fileLock, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("rath: lock file: %w", err)
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK}
		if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
			f.Close()
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
				return nil, ErrRunLive
			}
			return nil, fmt.Errorf("rath: lock %s: %w", path, err)
		}
		// An owner that finished removes its file: the lock must be on
		// the file the path names now, not on one already unlinked.
		if samePath(f, path) {
			return &fileLock{f: f, path: path}, nil
		}
		f.Close()
	}
}

// samePath reports whether path still names the file f has open.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

func (l *fileLock) record() Owner {
	return Owner{Lock: LockFile, Path: l.path, Since: time.Now().UTC()}
}

func (l *fileLock) lost() <-chan struct{} { return nil }

// release removes the file (while it is still ours) and drops the lock.
func (l *fileLock) release() error {
	if samePath(l.f, l.path) {
		_ = os.Remove(l.path)
	}
	return l.f.Close()
}

// probeFile tells whether an owner holds the lock at path. A missing file
// is a gone owner when the owner was on this host; from elsewhere nothing
// can be told.
func probeFile(o Owner) (liveness, error) {
	f, err := os.Open(o.Path)
	if errors.Is(err, fs.ErrNotExist) {
		if o.Host == hostname() {
			return dead, nil
		}
		return unknown, nil
	}
	if err != nil {
		return unknown, fmt.Errorf("rath: lock file: %w", err)
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return unknown, fmt.Errorf("rath: test lock %s: %w", o.Path, err)
	}
	if lk.Type == unix.F_UNLCK {
		return dead, nil
	}
	return alive, nil
}
