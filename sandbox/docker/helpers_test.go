package docker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// requireDocker skips the test when there is no daemon or no default image,
// saying what to run — unless RATH_REQUIRE (comma-separated) names docker:
// then it fails, so CI skips nothing.
func requireDocker(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := std.Available(ctx)
	if err == nil {
		cli, _ := std.client()
		if _, ierr := cli.ImageInspect(ctx, DefaultImage); cerrdefs.IsNotFound(ierr) {
			err = fmt.Errorf("no image %s", DefaultImage)
		} else if ierr != nil {
			err = ierr
		}
	}
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%v: run scripts/lib/docker.sh's rath_docker_start", err)
	if slices.Contains(strings.Split(os.Getenv("RATH_REQUIRE"), ","), "docker") {
		t.Fatalf("RATH_REQUIRE names docker, but: %s", msg)
	}
	t.Skip(msg)
}

// testCtx is a context for one test step; a hang fails instead of blocking.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// open opens a Docker sandbox with workspaces under a temporary RATH_HOME,
// closed when the test ends.
func open(t testing.TB, spec session.Spec) *Sandbox {
	t.Helper()
	requireDocker(t)
	t.Setenv("RATH_HOME", t.TempDir())
	sb, err := std.Open(testCtx(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb.(*Sandbox)
}

// shell runs a script and fails the test on an error (not on an exit code).
func shell(t testing.TB, sb sandbox.Sandbox, script string) sandbox.Result {
	t.Helper()
	r, err := sb.Exec(testCtx(t), sandbox.Command{Shell: script})
	if err != nil {
		t.Fatalf("%q: %v (stderr %q)", script, err, r.Stderr)
	}
	return r
}

// out is a result's stdout, trimmed.
func out(r sandbox.Result) string { return strings.TrimSpace(string(r.Stdout)) }
