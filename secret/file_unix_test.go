//go:build unix

package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestFilePermissions(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	rs := NewResolvers()
	p := filepath.Join(dir, "k")
	if err := os.WriteFile(p, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := MustParse("secret://file" + filepath.ToSlash(p))
	root := os.Getuid() == 0
	for mode, refused := range map[os.FileMode]bool{
		0o600: false, 0o400: false, 0o700: false,
		0o640: !root, 0o604: !root, 0o644: !root, 0o660: !root, 0o444: !root,
		0o602: true, 0o666: true, 0o646: true,
	} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, err := rs.Resolve(ctx, ref)
		if refused != errors.Is(err, ErrUnsafe) {
			t.Errorf("mode %#o: err = %v", mode, err)
		}
		if err != nil && !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Errorf("mode %#o: no fix in %v", mode, err)
		}
	}
	// A FIFO is not read (opening it would block).
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	if _, err := rs.Resolve(ctx, MustParse("secret://file"+filepath.ToSlash(fifo))); !errors.Is(err, ErrUnsafe) {
		t.Errorf("fifo: %v", err)
	}
}

// The rule by owner: a file the reader owns is private (unless the reader
// is root); one another user owns may be read by others; none may be
// written by others.
func TestOwnerRule(t *testing.T) {
	for _, c := range []struct {
		perm       os.FileMode
		owner, uid int
		refused    bool
	}{
		{0o600, 1000, 1000, false}, {0o400, 1000, 1000, false},
		{0o640, 1000, 1000, true}, {0o604, 1000, 1000, true}, {0o644, 1000, 1000, true}, {0o620, 1000, 1000, true},
		{0o644, 0, 1000, false}, {0o444, 0, 1000, false}, {0o640, 0, 1000, false}, {0o664, 0, 1000, false},
		{0o644, 0, 0, false}, {0o644, 1000, 0, false}, {0o644, -1, 1000, false},
		{0o646, 0, 1000, true}, {0o602, 1000, 1000, true}, {0o666, 0, 0, true},
	} {
		err := ownerRule("/k", c.perm, c.owner, c.uid)
		if c.refused != errors.Is(err, ErrUnsafe) {
			t.Errorf("%+v: err = %v", c, err)
		}
	}
}

// A file owned by another user (root, as a container orchestrator mounts
// secrets) may be readable by others.
func TestFileOwnedByAnother(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("running as root")
	}
	st, err := os.Stat("/etc/hostname")
	if err != nil || st.Mode().Perm()&0o044 == 0 || st.Sys().(*syscall.Stat_t).Uid == uint32(os.Getuid()) || st.Size() == 0 {
		t.Skip("no root-owned, world-readable, non-empty /etc/hostname here")
	}
	if _, err := NewResolvers().Resolve(t.Context(), MustParse("secret://file/etc/hostname")); err != nil {
		t.Fatal(err)
	}
}
