package docker

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if alive(cmd.ProcessState.Pid()) {
		t.Skip("the pid of an exited process was taken again")
	}
	return cmd.ProcessState.Pid()
}

func TestReap(t *testing.T) {
	live := open(t, session.Spec{})
	ctx := testCtx(t)

	// A container whose owner has exited, as a crashed rath leaves it.
	id := sandbox.NewID()
	dir := t.TempDir()
	u, err := userFor(dir)
	if err != nil {
		t.Fatal(err)
	}
	cli, _ := std.client()
	cid, err := startContainer(ctx, cli, createOptions(sandbox.WithSession(ctx, "ses_orphan"), id, dir, session.Spec{}, u, deadPID(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = removeContainer(context.Background(), cli, cid) })
	c, err := findContainer(ctx, cli, id)
	if err != nil || c == nil || c.Labels[LabelSession] != "ses_orphan" {
		t.Fatalf("the orphan: %+v, %v", c, err)
	}

	if _, err := Reap(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := findContainer(ctx, cli, id); err != nil || c != nil {
		t.Fatalf("the orphan is still there: %+v, %v", c, err)
	}
	if c, err := findContainer(ctx, cli, live.ID()); err != nil || c == nil {
		t.Fatalf("a live sandbox was reaped: %v", err)
	}
	if r := shell(t, live, "echo ok"); out(r) != "ok" {
		t.Fatalf("the live sandbox: %q", r.Stdout)
	}
}

func TestUnavailable(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/rath-docker.sock")
	err := (&Backend{}).Available(context.Background())
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "no Docker daemon at unix:///nonexistent/rath-docker.sock") {
		t.Fatalf("err = %v", err)
	}
	if _, err := (&Backend{}).Open(context.Background(), session.Spec{Dir: t.TempDir()}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("Open without a daemon: %v", err)
	}
}

func TestMissingImage(t *testing.T) {
	requireDocker(t)
	t.Setenv("RATH_HOME", t.TempDir())
	_, err := std.Open(testCtx(t), session.Spec{Image: "rath-no-such-image:never"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), `"rath-no-such-image:never" is not present`) {
		t.Fatalf("err = %v", err)
	}
}
