package sandboxtest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func testBinary(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	data := make([]byte, 0, 3*256)
	for i := range 3 * 256 {
		data = append(data, byte(i*7))
	}
	if err := sb.WriteFile(ctx(t), "bin/all.dat", data); err != nil {
		t.Fatal(err)
	}
	got, err := sb.ReadFile(ctx(t), "bin/all.dat")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	r := run(t, sb, sandbox.Command{Args: []string{"cat", "bin/all.dat"}})
	if !bytes.Equal(r.Stdout, data) {
		t.Fatalf("cat gave %d bytes, not the %d written", len(r.Stdout), len(data))
	}
	r = run(t, sb, sandbox.Command{Shell: "cat > bin/copy.dat", Stdin: data})
	if got, err := sb.ReadFile(ctx(t), "bin/copy.dat"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("binary stdin: %d bytes, %v", len(got), err)
	}
}

func testList(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	for _, f := range []string{"b.txt", "a.txt", "dir/c.txt"} {
		if err := sb.WriteFile(ctx(t), f, []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	ls, err := sb.List(ctx(t), ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range ls {
		names = append(names, fi.Path)
	}
	if strings.Join(names, ",") != "a.txt,b.txt,dir" || !ls[2].IsDir || ls[0].Size != 5 {
		t.Fatalf("list = %+v", ls)
	}
	fi, err := sb.Stat(ctx(t), "dir/c.txt")
	if err != nil || fi.Size != 9 || fi.IsDir || fi.Path != "dir/c.txt" {
		t.Fatalf("stat = %+v, %v", fi, err)
	}
	if err := sb.Remove(ctx(t), "dir"); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Stat(ctx(t), "dir/c.txt"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("after Remove: %v", err)
	}
	r := sh(t, sb, "ls")
	if strings.Fields(string(r.Stdout))[0] != "a.txt" || strings.Contains(string(r.Stdout), "dir") {
		t.Fatalf("the command sees %q", r.Stdout)
	}
}

func testMissing(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	for _, op := range []func() error{
		func() error { _, err := sb.ReadFile(ctx(t), "nope.txt"); return err },
		func() error { _, err := sb.Stat(ctx(t), "no/such/file"); return err },
		func() error { _, err := sb.List(ctx(t), "nodir"); return err },
		func() error { return sb.Remove(ctx(t), "nope.txt") },
	} {
		if err := op(); !errors.Is(err, sandbox.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	}
}

// testHostile tries paths that lead out of the workspace, directly or
// through symlinks planted in it; none may reach the host's files.
func testHostile(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	ws := sb.WorkspaceDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"etc":          "/etc",
		"out":          outside,
		"up":           "..",
		"upup":         "../../..",
		"chain1":       "chain2",
		"chain2":       "chain3",
		"chain3":       "/",
		"sub/escape":   "../../",
		"secretlink":   secret,
		"inner":        "ok.txt", // inside: must work
		"sub/innerdir": "..",     // the workspace root: must work
	}
	if err := sb.WriteFile(ctx(t), "ok.txt", []byte("fine")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	hostile := []string{
		"/etc/passwd", "/", "..", "../secret.txt", "a/../../x", "sub/../../etc/passwd", "./../x",
		"etc/passwd", "out/secret.txt", "up/x", "upup/etc/passwd", "chain1/etc/passwd", "sub/escape/x",
		"secretlink", "nul\x00byte", `..\windows`, `C:\x`,
	}
	for _, p := range hostile {
		if _, err := sb.ReadFile(ctx(t), p); !errors.Is(err, sandbox.ErrEscape) {
			t.Errorf("ReadFile(%q): err = %v, want ErrEscape", p, err)
		}
		if err := sb.WriteFile(ctx(t), p, []byte("pwned")); !errors.Is(err, sandbox.ErrEscape) {
			t.Errorf("WriteFile(%q): err = %v, want ErrEscape", p, err)
		}
		if _, err := sb.Stat(ctx(t), p); !errors.Is(err, sandbox.ErrEscape) {
			t.Errorf("Stat(%q): err = %v, want ErrEscape", p, err)
		}
	}
	for _, p := range []string{"out", "up", "sub/escape", "etc"} {
		if err := sb.Mkdir(ctx(t), p+"/made"); !errors.Is(err, sandbox.ErrEscape) {
			t.Errorf("Mkdir(%q): err = %v, want ErrEscape", p+"/made", err)
		}
		if _, err := sb.List(ctx(t), p); !errors.Is(err, sandbox.ErrEscape) {
			t.Errorf("List(%q): err = %v, want ErrEscape", p, err)
		}
		if err := sb.Remove(ctx(t), p+"/x"); !errors.Is(err, sandbox.ErrEscape) {
			t.Errorf("Remove(%q): err = %v, want ErrEscape", p+"/x", err)
		}
	}
	// Removing the link itself is removing a workspace entry.
	if err := sb.Remove(ctx(t), "out"); err != nil {
		t.Errorf("Remove(out), the link: %v", err)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "outside" {
		t.Fatalf("the file outside the workspace was touched: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("something was created outside the workspace: %v", ents)
	}
	if b, err := sb.ReadFile(ctx(t), "inner"); err != nil || string(b) != "fine" {
		t.Fatalf("a symlink inside the workspace: %q, %v", b, err)
	}
	if b, err := sb.ReadFile(ctx(t), "sub/innerdir/ok.txt"); err != nil || string(b) != "fine" {
		t.Fatalf("a symlink to the workspace root: %q, %v", b, err)
	}
}

// testSwap swaps a directory for a symlink to /etc while reads run through
// it: a read may fail, but never return the host's file.
func testSwap(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	ws := sb.WorkspaceDir()
	if err := sb.WriteFile(ctx(t), "d/passwd", []byte("workspace copy")); err != nil {
		t.Fatal(err)
	}
	host, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skip("no /etc/passwd on this host")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		d, real := filepath.Join(ws, "d"), filepath.Join(ws, "d.real")
		for !stop.Load() {
			_ = os.Rename(d, real)
			_ = os.Symlink("/etc", d)
			_ = os.Remove(d)
			_ = os.Rename(real, d)
		}
	})
	// 3,000 reads, or as many as ten seconds allow past the first 20: a
	// remote backend reads through a guard command it starts in the
	// sandbox (a process per read in its fake), and under -race on a
	// loaded machine 3,000 of them took seven minutes. A local backend
	// makes its 3,000 in a second or two.
	var escaped, reads int
	began := time.Now()
	for i := 0; i < 3000 && (i < 20 || time.Since(began) < 10*time.Second); i++ {
		b, err := sb.ReadFile(ctx(t), "d/passwd")
		if err == nil {
			reads++
			if bytes.Equal(b, host) {
				escaped++
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if escaped > 0 {
		t.Fatalf("%d of %d reads returned the host's /etc/passwd", escaped, reads)
	}
}
