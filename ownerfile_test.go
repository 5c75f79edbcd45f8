package rath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	l, err := lockFileAt(path)
	if err != nil {
		t.Fatal(err)
	}
	o := l.record()
	o.Host = hostname()
	// Another open file description, even in this process, is refused
	// and sees the lock held; testing it takes nothing.
	if _, err := lockFileAt(path); !errors.Is(err, ErrRunLive) {
		t.Fatalf("second lock: %v", err)
	}
	for range 2 {
		if live, err := probeFile(o); live != alive || err != nil {
			t.Fatalf("held lock probed %v, %v", live, err)
		}
	}
	if err := l.release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("released lock file still there: %v", err)
	}
	if live, err := probeFile(o); live != dead || err != nil {
		t.Fatalf("released lock probed %v, %v", live, err)
	}
	// A missing file of another host's owner tells nothing.
	o.Host = "elsewhere.invalid"
	if live, _ := probeFile(o); live != unknown {
		t.Fatalf("another host's missing lock probed %v", live)
	}
}

// TestLockFileLeftBehind: a lock whose descriptor is closed without a
// release (what the kernel does when its process dies) is free at once,
// and the file left behind is locked again. (TestResumeAfterKill kills a
// real owner.)
func TestLockFileLeftBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	l, err := lockFileAt(path)
	if err != nil {
		t.Fatal(err)
	}
	o := Owner{Lock: LockFile, Path: path, Host: hostname()}
	if live, _ := probeFile(o); live != alive {
		t.Fatalf("probed %v", live)
	}
	if err := l.f.Close(); err != nil {
		t.Fatal(err)
	}
	if live, _ := probeFile(o); live != dead {
		t.Fatalf("a lock whose holder is gone probed %v", live)
	}
	again, err := lockFileAt(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.release(); err != nil {
		t.Fatal(err)
	}
}
