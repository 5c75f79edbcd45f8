package e2b_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

// E2B creates a sandbox synchronously (201 when it runs), so the
// "stuck in Pending" fault has no E2B form; sandbox/opensandbox tests it.

func TestWrongKeyIsOneClearError(t *testing.T) {
	srv, _ := startFake(t, e2bfake.Options{})
	o := optionsOf(t, srv)
	o.APIKey = "wrong"
	_, err := e2b.New(o).Open(testCtx(t), session.Spec{})
	var se *remote.StatusError
	if !errors.As(err, &se) || se.Status != 401 || !errors.Is(err, remote.ErrAPI) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("err = %v", err)
	}
	if n := srv.Requests("/sandboxes"); n != 1 {
		t.Fatalf("a 401 was sent %d times", n)
	}
	if err := e2b.New(o).Available(testCtx(t)); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("Available with a wrong key: %v", err)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	srv, b := startFake(t, e2bfake.Options{})
	srv.Inject(e2bfake.Fault{Method: "POST", Path: "/sandboxes", Status: 429, RetryAfter: "1"})
	start := time.Now()
	sb := open(t, b, session.Spec{})
	defer sb.Close()
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("retried after %s, before the Retry-After of 1s", waited)
	}
	if n := srv.Requests("/sandboxes"); n != 2 {
		t.Fatalf("create was sent %d times, want 2", n)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	srv, b := startFake(t, e2bfake.Options{})
	sb := open(t, b, session.Spec{})
	defer sb.Close()
	ctx := testCtx(t)
	for _, path := range []string{"/process.Process/Start", "/files"} {
		srv.Inject(e2bfake.Fault{Path: path, Status: 500, Times: 2})
	}
	if err := sb.WriteFile(ctx, "a.txt", []byte("after two 500s")); err != nil {
		t.Fatal(err)
	}
	r, err := sb.Exec(ctx, sandbox.Command{Args: []string{"cat", "a.txt"}})
	if err != nil || string(r.Stdout) != "after two 500s" {
		t.Fatalf("exec after 500s: %q, %v", r.Stdout, err)
	}
	// Past the attempts, one clear error that says what refused.
	srv.Inject(e2bfake.Fault{Path: "/process.Process/Start", Status: 503, Times: 10})
	_, err = sb.Exec(ctx, sandbox.Command{Args: []string{"true"}})
	if !errors.Is(err, remote.ErrAPI) || errors.Is(err, sandbox.ErrInterrupted) {
		t.Fatalf("after the attempts: %v", err)
	}
}
