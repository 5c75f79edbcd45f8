package bwrap

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func TestRegistered(t *testing.T) {
	b, err := sandbox.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(Backend); !ok {
		t.Errorf("%q is a %T", Name, b)
	}
}

func TestCapabilities(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	want := sandbox.Capabilities{Isolated: true, NetworkControl: true, Limits: false, Reattach: true, EgressControl: true}
	if got := sb.Capabilities(); got != want {
		t.Errorf("Capabilities() = %+v, want %+v", got, want)
	}
	if sb.Backend() != Name || !sandbox.ValidID(sb.ID()) {
		t.Errorf("Backend %q, ID %q", sb.Backend(), sb.ID())
	}
}

func TestAttach(t *testing.T) {
	tempHome(t)
	ctx := t.Context()
	spec := session.Spec{}
	sb := openSandbox(t, spec)
	mustSh(t, sb, "echo kept > note")
	id := sb.ID()
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Exec(ctx, sandbox.Command{Args: []string{"true"}}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("Exec after Close: %v, want ErrClosed", err)
	}
	again, err := (Backend{}).Attach(ctx, id, spec)
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	defer again.Close()
	if again.ID() != id || again.WorkspaceDir() != sb.WorkspaceDir() {
		t.Errorf("attached %s at %s, want %s at %s", again.ID(), again.WorkspaceDir(), id, sb.WorkspaceDir())
	}
	if out := mustSh(t, again, "cat note"); out != "kept\n" {
		t.Errorf("note = %q", out)
	}
	for _, id := range []string{sandbox.NewID(), "../../etc", "sbx_zz"} {
		if _, err := (Backend{}).Attach(ctx, id, spec); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("Attach(%q): %v, want ErrNotFound", id, err)
		}
	}
}

func TestAttachSpecDir(t *testing.T) {
	tempHome(t)
	dir := t.TempDir()
	spec := session.Spec{Dir: dir}
	sb := openSandbox(t, spec)
	if sb.WorkspaceDir() != dir {
		t.Fatalf("workspace %s, want %s", sb.WorkspaceDir(), dir)
	}
	mustSh(t, sb, "echo here > f")
	sb.Close()
	again, err := (Backend{}).Attach(t.Context(), sb.ID(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if out := mustSh(t, again, "cat f"); out != "here\n" {
		t.Errorf("f = %q", out)
	}
}

func TestCloneIsolation(t *testing.T) {
	tempHome(t)
	ctx := t.Context()
	sb := openSandbox(t, session.Spec{})
	mustSh(t, sb, "echo original > a.txt")
	c, err := sb.Clone(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ID() == sb.ID() || c.WorkspaceDir() == sb.WorkspaceDir() || c.Backend() != Name {
		t.Fatalf("clone %s at %s (%s)", c.ID(), c.WorkspaceDir(), c.Backend())
	}
	mustSh(t, c, "echo changed > a.txt && echo new > b.txt")
	if out := mustSh(t, sb, "cat a.txt; ls"); out != "original\na.txt\n" {
		t.Errorf("the original sees %q after the clone changed", out)
	}
	if out := mustSh(t, c, "cat a.txt b.txt"); out != "changed\nnew\n" {
		t.Errorf("the clone sees %q", out)
	}
	if _, err := (Backend{}).Attach(ctx, c.ID(), session.Spec{}); err != nil {
		t.Errorf("attaching the clone by id: %v", err)
	}
}

// miniRoot makes a root filesystem holding dash and the libraries it
// needs, and a marker file.
func miniRoot(t *testing.T) string {
	t.Helper()
	dash, err := exec.LookPath("dash")
	if err != nil {
		t.Skip("no dash to build a root filesystem with")
	}
	dash, _ = filepath.EvalSymlinks(dash)
	out, err := exec.Command("ldd", dash).Output()
	if err != nil {
		t.Skipf("ldd %s: %v", dash, err)
	}
	root := t.TempDir()
	copyTo := func(src, dst string) {
		t.Helper()
		in, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		dst = filepath.Join(root, dst)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		o, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(o, in); err != nil {
			t.Fatal(err)
		}
		o.Close()
	}
	copyTo(dash, "bin/sh")
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				copyTo(f, f)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "marker"), []byte("mini root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestImage(t *testing.T) {
	tempHome(t)
	requireBwrap(t)
	root := miniRoot(t)
	sb := openSandbox(t, session.Spec{Image: root})
	out := mustSh(t, sb, `read line < /etc/marker; echo "$line"; test -e /etc/debian_version || echo no-host; echo w > out; cat out 2>/dev/null || echo no-cat`)
	if out != "mini root\nno-host\nno-cat\n" {
		t.Errorf("inside the image: %q", out)
	}
	if data, err := os.ReadFile(filepath.Join(sb.WorkspaceDir(), "out")); err != nil || string(data) != "w\n" {
		t.Errorf("workspace write: %q, %v", data, err)
	}
	if res := sh(t, sb, "echo x > /etc/new"); res.ExitCode == 0 {
		t.Error("wrote to the image")
	}
	if _, err := os.Stat(filepath.Join(root, "etc", "new")); err == nil {
		t.Error("the image changed on the host")
	}
}

func TestImageInvalid(t *testing.T) {
	tempHome(t)
	requireBwrap(t)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, image := range []string{"debian:12", t.TempDir(), file} {
		if sb, err := (Backend{}).Open(t.Context(), session.Spec{Image: image}); err == nil {
			sb.Close()
			t.Errorf("Open with Image %q succeeded", image)
		}
	}
}
