package bwrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func TestExecDir(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	ctx := t.Context()
	if err := sb.Mkdir(ctx, "sub/deeper"); err != nil {
		t.Fatal(err)
	}
	if err := sb.WriteFile(ctx, "file", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ws := sb.WorkspaceDir()
	for name, target := range map[string]string{"up": "..", "abs": "/etc", "in": "sub"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := sb.Exec(ctx, sandbox.Command{Args: []string{"pwd"}, Dir: "sub/deeper"})
	if err != nil || string(res.Stdout) != Home+"/sub/deeper\n" {
		t.Errorf("pwd in sub/deeper: %q, %v", res.Stdout, err)
	}
	res, err = sb.Exec(ctx, sandbox.Command{Shell: "ls", Dir: "in"})
	if err != nil || string(res.Stdout) != "deeper\n" {
		t.Errorf("ls through a symlink inside: %q, %v", res.Stdout, err)
	}
	for dir, want := range map[string]error{
		"../x": sandbox.ErrEscape, "/etc": sandbox.ErrEscape, "up": sandbox.ErrEscape,
		"abs": sandbox.ErrEscape, "missing": sandbox.ErrNotFound,
	} {
		if _, err := sb.Exec(ctx, sandbox.Command{Args: []string{"true"}, Dir: dir}); !errors.Is(err, want) {
			t.Errorf("Dir %q: %v, want %v", dir, err, want)
		}
	}
	if _, err := sb.Exec(ctx, sandbox.Command{Args: []string{"true"}, Dir: "file"}); err == nil {
		t.Error("Dir naming a file was accepted")
	}
}

func TestExecResult(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	ctx := t.Context()
	res := sh(t, sb, "echo out; echo err >&2; exit 3")
	if res.ExitCode != 3 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
		t.Errorf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res, err := sb.Exec(ctx, sandbox.Command{Args: []string{"no-such-program-rath"}})
	if err != nil || res.ExitCode != 127 {
		t.Errorf("a missing program: exit %d, %v, want 127", res.ExitCode, err)
	}
	var streamed bytes.Buffer
	res, err = sb.Exec(ctx, sandbox.Command{Args: []string{"cat"}, Stdin: []byte("from stdin"), Stdout: &streamed})
	if err != nil || string(res.Stdout) != "from stdin" || streamed.String() != "from stdin" {
		t.Errorf("cat: %q (streamed %q), %v", res.Stdout, streamed.String(), err)
	}
	if _, err := sb.Exec(ctx, sandbox.Command{}); err == nil {
		t.Error("an empty command was accepted")
	}
}

// processesWith counts the host's processes whose command line holds arg.
func processesWith(arg string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte("\x00"+arg+"\x00")) {
			n++
		}
	}
	return n
}

// survivors waits for the processes holding marker to go, for up to ten
// seconds (SIGKILL is delivered asynchronously), and returns how many are
// left.
func survivors(marker string) int {
	left := processesWith(marker)
	for deadline := time.Now().Add(10 * time.Second); left > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		left = processesWith(marker)
	}
	return left
}

// sleepMarker returns a sleep time no other process is likely to have, to
// find the sleeps a test starts by.
func sleepMarker() string {
	return fmt.Sprintf("1000.%09d", time.Now().UnixNano()%1e9)
}

// onFirstWrite calls fn once, when something is first written.
type onFirstWrite struct {
	once sync.Once
	fn   func()
}

func (w *onFirstWrite) Write(p []byte) (int, error) {
	w.once.Do(w.fn)
	return len(p), nil
}

func TestTimeoutKillsEverything(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	marker := sleepMarker()
	seen := 0
	started := &onFirstWrite{fn: func() {
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if seen = processesWith(marker); seen == 2 {
				return
			}
		}
	}}
	script := fmt.Sprintf("sleep %s & sleep %s & echo started; wait", marker, marker)
	res, err := sb.Exec(t.Context(), sandbox.Command{Shell: script, Timeout: 3 * time.Second, Stdout: started})
	if !errors.Is(err, sandbox.ErrTimeout) || !res.TimedOut {
		t.Fatalf("got %v (timed out %v), want ErrTimeout", err, res.TimedOut)
	}
	if seen != 2 {
		t.Fatalf("saw %d sleeps running before the timeout, want 2", seen)
	}
	if left := survivors(marker); left != 0 {
		t.Errorf("%d sleeps survived the timeout", left)
	}
	if out := mustSh(t, sb, "echo still works"); out != "still works\n" {
		t.Errorf("after the timeout: %q", out)
	}
}

func TestCancelKillsEverything(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	ctx, cancel := context.WithCancel(t.Context())
	marker := sleepMarker()
	seen := 0
	started := &onFirstWrite{fn: func() {
		for deadline := time.Now().Add(3 * time.Second); seen == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			seen = processesWith(marker)
		}
		cancel()
	}}
	_, err := sb.Exec(ctx, sandbox.Command{Shell: "sleep " + marker + " & echo started; wait", Stdout: started})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if seen != 1 {
		t.Fatalf("saw %d sleeps running before the cancel, want 1", seen)
	}
	if left := survivors(marker); left != 0 {
		t.Errorf("%d sleeps survived the cancel", left)
	}
}

func TestMemoryLimit(t *testing.T) {
	tempHome(t)
	const limit = 32 << 20
	limited := openSandbox(t, session.Spec{MemoryBytes: limit})
	free := openSandbox(t, session.Spec{})
	if out := mustSh(t, limited, "ulimit -v"); out != fmt.Sprint(limit/1024)+"\n" {
		t.Errorf("ulimit -v = %q, want %d", out, limit/1024)
	}
	alloc := "dd if=/dev/zero of=/dev/null bs=64M count=1 2>&1"
	mustSh(t, free, alloc)
	if res := sh(t, limited, alloc); res.ExitCode == 0 {
		t.Errorf("allocated 64 MiB under a %d-byte limit", limit)
	}
}

func TestPIDsLimit(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{PIDs: 20})
	if out := mustSh(t, sb, "ulimit -u 2>/dev/null || ulimit -p"); out != "20\n" {
		t.Errorf("process limit %q, want 20", out)
	}
	if os.Geteuid() == 0 {
		t.Skip("the kernel does not enforce RLIMIT_NPROC for root")
	}
	res := sh(t, sb, "for i in $(seq 40); do sleep 1 & done; wait")
	if res.ExitCode == 0 || !strings.Contains(strings.ToLower(string(res.Stderr)), "fork") {
		t.Errorf("started 40 processes under a limit of 20: exit %d %s", res.ExitCode, res.Stderr)
	}
}
