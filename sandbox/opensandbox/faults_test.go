package opensandbox_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

func TestWrongKeyIsOneClearError(t *testing.T) {
	srv, _ := startFake(t, osfake.Options{})
	o := optionsOf(srv)
	o.APIKey = "wrong"
	_, err := opensandbox.New(o).Open(testCtx(t), session.Spec{})
	var se *remote.StatusError
	if !errors.As(err, &se) || se.Status != 401 || !strings.Contains(err.Error(), "OPEN_SANDBOX_API_KEY") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("err = %v", err)
	}
	if n := srv.Requests("/v1/sandboxes"); n != 1 {
		t.Fatalf("a 401 was sent %d times", n)
	}
	if err := opensandbox.New(o).Available(testCtx(t)); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("Available with a wrong key: %v", err)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	srv, b := startFake(t, osfake.Options{})
	srv.Inject(osfake.Fault{Method: "POST", Path: "/sandboxes", Status: 429, RetryAfter: "1"})
	start := time.Now()
	sb := open(t, b, session.Spec{})
	defer sb.Close()
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("retried after %s, before the Retry-After of 1s", waited)
	}
	if n := srv.Sandboxes(); n != 1 {
		t.Fatalf("%d sandboxes after a refused and a granted create, want 1", n)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	srv, b := startFake(t, osfake.Options{})
	sb := open(t, b, session.Spec{})
	defer sb.Close()
	ctx := testCtx(t)
	for _, path := range []string{"/command", "/files/upload", "/files/download"} {
		srv.Inject(osfake.Fault{Path: path, Status: 500, Times: 2})
	}
	if err := sb.WriteFile(ctx, "a.txt", []byte("after two 500s")); err != nil {
		t.Fatal(err)
	}
	r, err := sb.Exec(ctx, sandbox.Command{Args: []string{"cat", "a.txt"}})
	if err != nil || string(r.Stdout) != "after two 500s" {
		t.Fatalf("exec after 500s: %q, %v", r.Stdout, err)
	}
	// Past the attempts, one clear error that says what refused.
	srv.Inject(osfake.Fault{Path: "/command", Status: 503, Times: 10})
	_, err = sb.Exec(ctx, sandbox.Command{Args: []string{"true"}})
	if !errors.Is(err, remote.ErrAPI) || errors.Is(err, sandbox.ErrInterrupted) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("after the attempts: %v", err)
	}
}

// A sandbox that stays Pending past the start timeout is given up on,
// deleted, and Open says so.
func TestStuckInPendingIsDeleted(t *testing.T) {
	srv, _ := startFake(t, osfake.Options{StuckPending: true})
	o := optionsOf(srv)
	o.StartTimeout = 300 * time.Millisecond
	_, err := opensandbox.New(o).Open(testCtx(t), session.Spec{})
	if err == nil || !strings.Contains(err.Error(), "stuck in Pending") || !strings.Contains(err.Error(), "was deleted") {
		t.Fatalf("open of a sandbox stuck in Pending: %v", err)
	}
	if n := srv.Sandboxes(); n != 0 {
		t.Fatalf("%d sandboxes left after giving up", n)
	}
}

// Commands get argv as given, however hostile, and stdin although execd
// has none.
func TestArgvAndStdinSurviveTheShellString(t *testing.T) {
	_, b := startFake(t, osfake.Options{})
	sb := open(t, b, session.Spec{})
	defer sb.Close()
	ctx := testCtx(t)
	argv := []string{"printf", `[%s]`, "it's", "$(id)", "`id`", "a b", "", "\\", `"q"`, "*", "new\nline"}
	r, err := sb.Exec(ctx, sandbox.Command{Args: argv})
	if err != nil {
		t.Fatal(err)
	}
	want := "[it's][$(id)][`id`][a b][][\\][\"q\"][*][new\nline]"
	if string(r.Stdout) != want {
		t.Fatalf("stdout %q, want %q", r.Stdout, want)
	}
	in := []byte("line one\n\x00binary\xff\nlast without newline")
	r, err = sb.Exec(ctx, sandbox.Command{Args: []string{"cat"}, Stdin: in})
	if err != nil || string(r.Stdout) != string(in) {
		t.Fatalf("stdin through cat: %q, %v", r.Stdout, err)
	}
	// The stdin file is gone once the command ran.
	r, err = sb.Exec(ctx, sandbox.Command{Shell: "ls -A ~/.rath-stage | grep -c rath-stdin || true"})
	if err != nil || strings.TrimSpace(string(r.Stdout)) != "0" {
		t.Fatalf("stdin files left behind: %q, %v", r.Stdout, err)
	}
}
