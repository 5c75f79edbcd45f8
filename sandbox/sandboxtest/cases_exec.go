package sandboxtest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func testExec(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	r := sh(t, sb, "echo out; echo err >&2; exit 3")
	if string(r.Stdout) != "out\n" || string(r.Stderr) != "err\n" || r.ExitCode != 3 {
		t.Fatalf("result = %+v (stdout %q, stderr %q)", r, r.Stdout, r.Stderr)
	}
	r = run(t, sb, sandbox.Command{Args: []string{"echo", "a b", "c"}})
	if string(r.Stdout) != "a b c\n" || r.ExitCode != 0 {
		t.Fatalf("argv: %q %d", r.Stdout, r.ExitCode)
	}
	r = run(t, sb, sandbox.Command{Args: []string{"no-such-program-rath"}})
	if r.ExitCode == 0 {
		t.Fatalf("a missing program exited 0")
	}
	if _, err := sb.Exec(ctx(t), sandbox.Command{}); err == nil {
		t.Fatal("an empty command ran")
	}
}

func testStdin(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	in := []byte("line one\nline two\n")
	r := run(t, sb, sandbox.Command{Args: []string{"cat"}, Stdin: in})
	if !bytes.Equal(r.Stdout, in) {
		t.Fatalf("cat echoed %q", r.Stdout)
	}
	r = run(t, sb, sandbox.Command{Shell: "wc -l", Stdin: in})
	if strings.TrimSpace(string(r.Stdout)) != "2" {
		t.Fatalf("wc -l = %q", r.Stdout)
	}
}

func testEnv(t *testing.T, open Open) {
	t.Setenv("RATH_TEST_HOST_SECRET", "hunter2-host-secret")
	t.Setenv("RATH_TEST_PASSED_SECRET", "passed-through-value")
	sb := fresh(t, open, session.Spec{Env: map[string]string{"FROM_SPEC": "spec-value"}, SecretEnv: []string{"RATH_TEST_PASSED_SECRET"}})
	r := run(t, sb, sandbox.Command{Args: []string{"env"}, Env: map[string]string{"FROM_CMD": "cmd-value"}})
	env := string(r.Stdout)
	if strings.Contains(env, "hunter2-host-secret") || strings.Contains(env, "RATH_TEST_HOST_SECRET") {
		t.Fatalf("the host's secret reached the command:\n%s", env)
	}
	for _, want := range []string{"FROM_SPEC=spec-value", "FROM_CMD=cmd-value", "RATH_TEST_PASSED_SECRET=passed-through-value", "PATH=", "HOME="} {
		if !strings.Contains(env, want) {
			t.Fatalf("env lacks %s:\n%s", want, env)
		}
	}
}

func testDir(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	if err := sb.Mkdir(ctx(t), "sub/deeper"); err != nil {
		t.Fatal(err)
	}
	top := strings.TrimSpace(string(sh(t, sb, "pwd").Stdout))
	r := run(t, sb, sandbox.Command{Shell: "pwd; echo x > here.txt", Dir: "sub/deeper"})
	if got := strings.TrimSpace(string(r.Stdout)); got != top+"/sub/deeper" {
		t.Fatalf("pwd in sub/deeper = %q (top %q)", got, top)
	}
	if _, err := sb.ReadFile(ctx(t), "sub/deeper/here.txt"); err != nil {
		t.Fatalf("the file written in Dir: %v", err)
	}
	for _, bad := range []string{"../", "/etc", "sub/../../"} {
		if _, err := sb.Exec(ctx(t), sandbox.Command{Args: []string{"pwd"}, Dir: bad}); !errors.Is(err, sandbox.ErrEscape) {
			t.Fatalf("Dir %q: err = %v", bad, err)
		}
	}
	if _, err := sb.Exec(ctx(t), sandbox.Command{Args: []string{"pwd"}, Dir: "missing"}); err == nil {
		t.Fatal("a missing Dir was accepted")
	}
}

func testTimeout(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	// The child is named by its pid and its start time (field 22 of its
	// stat): a backend that gives each command a pid namespace of its own
	// may give the same pid to another process later.
	r, err := sb.Exec(ctx(t), sandbox.Command{Shell: "echo started; sleep 30 & echo \"$! $(cut -d' ' -f22 /proc/$!/stat)\" > child.pid; sleep 30", Timeout: 500 * time.Millisecond})
	if !errors.Is(err, sandbox.ErrTimeout) || !r.TimedOut {
		t.Fatalf("err = %v, result = %+v", err, r)
	}
	if !strings.Contains(string(r.Stdout), "started") {
		t.Fatalf("output before the timeout was lost: %q", r.Stdout)
	}
	// The sandbox still works, and the background child is gone (dead: a
	// zombie waiting for an init that reaps slowly counts as gone).
	r = sh(t, sb, `read p st < child.pid; s=$(cut -d' ' -f3,22 /proc/$p/stat 2>/dev/null); if [ -n "$s" ] && [ "${s% *}" != Z ] && [ "${s#* }" = "$st" ]; then echo alive; else echo gone; fi`)
	if strings.TrimSpace(string(r.Stdout)) != "gone" {
		t.Fatalf("the timed-out command's child survived: %q", r.Stdout)
	}
	// The spec's timeout applies when the command sets none.
	sb2 := fresh(t, open, session.Spec{Timeout: 300 * time.Millisecond})
	if _, err := sb2.Exec(ctx(t), sandbox.Command{Args: []string{"sleep", "30"}}); !errors.Is(err, sandbox.ErrTimeout) {
		t.Fatalf("spec timeout: err = %v", err)
	}
}

func testConcurrent(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprintf("worker-%d", i)
			r, err := sb.Exec(ctx(t), sandbox.Command{Shell: fmt.Sprintf("echo %s > %s.txt; cat %s.txt", want, want, want)})
			if err != nil || strings.TrimSpace(string(r.Stdout)) != want {
				t.Errorf("worker %d: %q, %v", i, r.Stdout, err)
			}
		})
	}
	wg.Wait()
	ls, err := sb.List(ctx(t), ".")
	if err != nil || len(ls) != n {
		t.Fatalf("listed %d files, %v", len(ls), err)
	}
}

func testStream(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	var out, errs bytes.Buffer
	r := run(t, sb, sandbox.Command{Shell: "for i in 1 2 3; do echo o$i; echo e$i >&2; done", Stdout: &out, Stderr: &errs})
	if out.String() != "o1\no2\no3\n" || errs.String() != "e1\ne2\ne3\n" || !bytes.Equal(r.Stdout, out.Bytes()) {
		t.Fatalf("streamed %q / %q, result %q", out.String(), errs.String(), r.Stdout)
	}

	// Output arrives while the command runs: the command waits (20s at
	// most) for a file that is written only once its first line has
	// arrived here.
	w := &onLine{want: "first", then: func() error { return sb.WriteFile(ctx(t), "go", nil) }}
	r = run(t, sb, sandbox.Command{Stdout: w,
		Shell: `echo first; i=0; while [ ! -e go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; [ -e go ] && echo second`})
	if err := w.wait(); err != nil {
		t.Fatal(err)
	}
	if string(r.Stdout) != "first\nsecond\n" {
		t.Fatalf("the first line did not arrive while the command ran: stdout %q", r.Stdout)
	}
}

// onLine runs then, in the background, once a line want has been written
// to it.
type onLine struct {
	want string
	then func() error
	buf  []byte
	done chan error
}

func (o *onLine) Write(p []byte) (int, error) {
	o.buf = append(o.buf, p...)
	if o.done == nil && bytes.Contains(o.buf, []byte(o.want+"\n")) {
		o.done = make(chan error, 1)
		go func() { o.done <- o.then() }()
	}
	return len(p), nil
}

// wait returns then's error, or nil if it never ran.
func (o *onLine) wait() error {
	if o.done == nil {
		return nil
	}
	return <-o.done
}

func testClosed(t *testing.T, open Open) {
	sb := open(t, session.Spec{})
	if err := sb.WriteFile(ctx(t), "a.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Exec(ctx(t), sandbox.Command{Args: []string{"true"}}); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("Exec after Close: %v", err)
	}
	if _, err := sb.ReadFile(ctx(t), "a.txt"); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("ReadFile after Close: %v", err)
	}
	if err := sb.WriteFile(ctx(t), "b.txt", nil); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("WriteFile after Close: %v", err)
	}
	if _, err := sb.Clone(ctx(t)); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("Clone after Close: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// testCapped writes more than MaxOutput to stdout: the Result keeps the
// first MaxOutput bytes and counts the rest; the Stdout writer gets all.
func testCapped(t *testing.T, open Open) {
	sb := fresh(t, open, session.Spec{})
	const over = 1000
	var all countWriter
	r := run(t, sb, sandbox.Command{Shell: fmt.Sprintf("head -c %d /dev/zero; echo tail >&2", sandbox.MaxOutput+over), Stdout: &all})
	if len(r.Stdout) != sandbox.MaxOutput || r.Dropped != over || all.n != sandbox.MaxOutput+over || string(r.Stderr) != "tail\n" {
		t.Fatalf("kept %d bytes, dropped %d, streamed %d (stderr %q); want %d, %d, %d",
			len(r.Stdout), r.Dropped, all.n, r.Stderr, sandbox.MaxOutput, over, sandbox.MaxOutput+over)
	}
}

// countWriter counts what is written to it.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }
