package docker

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/moby/moby/client"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func TestAttach(t *testing.T) {
	sb := open(t, session.Spec{})
	ctx := testCtx(t)
	shell(t, sb, "echo kept > /tmp/marker && echo file > ws.txt")
	id, cid := sb.ID(), sb.ContainerID()
	// sb is dropped without Close, as by a restart.

	// The same container is found again: its /tmp is still there.
	got, err := sandbox.Attach(ctx, Name, id, session.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	a := got.(*Sandbox)
	t.Cleanup(func() { a.Close() })
	if a.ContainerID() != cid || out(shell(t, a, "cat /tmp/marker")) != "kept" {
		t.Fatalf("attached to container %s, not %s", a.ContainerID(), cid)
	}

	// A stopped container is started again.
	if _, err := a.cli.ContainerStop(ctx, cid, client.ContainerStopOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = sandbox.Attach(ctx, Name, id, session.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if r := shell(t, got, "cat ws.txt"); out(r) != "file" {
		t.Fatalf("after a restart of the container: %q %q", r.Stdout, r.Stderr)
	}

	// Unknown ids are not found.
	for _, bad := range []string{sandbox.NewID(), "not-an-id", "../../etc"} {
		if _, err := sandbox.Attach(ctx, Name, bad, session.Spec{}); !errors.Is(err, sandbox.ErrNotFound) {
			t.Fatalf("Attach(%q): %v", bad, err)
		}
	}

	// With the container gone, the kept workspace gets a new one.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if c, _ := findContainer(ctx, a.cli, id); c != nil {
		t.Fatalf("Close left container %s", c.ID)
	}
	got, err = sandbox.Attach(ctx, Name, id, session.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.(*Sandbox).ContainerID() == cid || out(shell(t, got, "cat ws.txt")) != "file" {
		t.Fatalf("reattached to %s on %s", got.(*Sandbox).ContainerID(), got.WorkspaceDir())
	}
	if _, err := os.Stat(filepath.Join(sandbox.WorkspacesDir(), id, "ws.txt")); err != nil {
		t.Fatal(err)
	}
}
