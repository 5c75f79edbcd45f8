package docker

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestParseUser(t *testing.T) {
	u, err := parseUser("1000:1001")
	if err != nil || u.uid != 1000 || u.gid != 1001 || u.String() != "1000:1001" {
		t.Fatalf("%+v, %v", u, err)
	}
	for _, bad := range []string{"", "0:0", "1000", "rath:rath", "1000:x"} {
		if _, err := parseUser(bad); err == nil {
			t.Fatalf("parseUser(%q) accepted it", bad)
		}
	}
}

// TestHandOverTree: as root, a workspace is given to the commands' user,
// without following a symlink out of it.
func TestHandOverTree(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root hands workspaces over")
	}
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	u, err := userFor(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u.uid != SandboxUID || !u.handOver {
		t.Fatalf("user %+v", u)
	}
	for _, p := range []string{".", "a", "a/b", "a/b/f", "out"} {
		if uid := lowner(t, filepath.Join(dir, p)); uid != SandboxUID {
			t.Fatalf("%s belongs to %d", p, uid)
		}
	}
	if uid := lowner(t, outside); uid != 0 {
		t.Fatalf("the symlink's target outside was handed over too (uid %d)", uid)
	}
	// A workspace a user owns is used as that user.
	if err := os.Chown(dir, 1234, 1235); err != nil {
		t.Fatal(err)
	}
	if u2, err := userFor(dir); err != nil || u2.uid != 1234 || u2.gid != 1235 {
		t.Fatalf("%+v, %v", u2, err)
	}
}

func lowner(t *testing.T, p string) int {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}
