package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/session"
)

// TestSignals stops `rath run` as a person would — Ctrl-C typed at its
// terminal, SIGTERM from a supervisor, a second signal for an impatient
// one, a tool call that outlasts the grace period — and checks each ends
// in one sentence, the signal's exit code and an interrupted run that
// `rath resume` finishes with every effect made once.
func TestSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rath and starts processes")
	}
	bin := filepath.Join(t.TempDir(), "rath")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/openrath/rath/cmd/rath").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(*testing.T) string { return "" },
		"postgres": func(t *testing.T) string { return pgtest.FreshDB(t, "rath_signals") },
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			t.Run("CtrlCOnATerminal", func(t *testing.T) { ctrlC(t, newCLI(t, bin, stores[name](t))) })
			t.Run("SIGTERM", func(t *testing.T) { sigterm(t, newCLI(t, bin, stores[name](t))) })
			t.Run("PastTheGrace", func(t *testing.T) { pastGrace(t, newCLI(t, bin, stores[name](t))) })
			t.Run("SecondSignal", func(t *testing.T) { secondSignal(t, newCLI(t, bin, stores[name](t))) })
		})
	}
}

// heldInput is the cluster workflow's input: steps effects, the second of
// which holds its call for hold after it is made.
func heldInput(hold time.Duration) string {
	return fmt.Sprintf(`{"steps":%d,"latency_ms":0,"idempotent":false,"sleep_ms":%d,"sleep_on":2}`, steps, hold.Milliseconds())
}

// waitEffect waits until effect n of some run is logged and returns the run.
func (c *built) waitEffect(n int, what func() string) session.ID {
	c.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for run, byN := range c.effects() {
			if byN[n] == 1 {
				return run
			}
		}
	}
	c.t.Fatalf("effect %d never happened\n%s", n, what())
	return ""
}

// exitOf waits for cmd and returns its exit code.
func exitOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

var stopSentence = regexp.MustCompile(`rath[^\n]*: run (ses_\w+) was stopped by ([^\n]+) at a safe point and is interrupted; resume it with: [^\n]*resume (ses_\w+)`)

// checkStopped checks what a stopped rath said: the one sentence, naming
// the run and how it was stopped, and nothing of Go's.
func checkStopped(t *testing.T, text string, run session.ID, how string) {
	t.Helper()
	m := stopSentence.FindAllStringSubmatch(text, -1)
	if len(m) != 1 || m[0][1] != string(run) || m[0][3] != string(run) || !strings.HasPrefix(m[0][2], how) {
		t.Fatalf("rath did not say, once, that run %s was stopped by %s:\n%s", run, how, text)
	}
	for _, bad := range []string{"goroutine", "context canceled", "panic", "commit "} {
		if strings.Contains(text, bad) {
			t.Fatalf("rath said %q:\n%s", bad, text)
		}
	}
}

// resumed checks the stopped run is interrupted, resumes it to its end
// and checks every effect happened once. It returns how many calls a
// review settled.
func (c *built) resumed(run session.ID) int {
	c.t.Helper()
	c.ok("verify")
	if st := c.ls()[run].Status; st != rath.StatusInterrupted {
		c.t.Fatalf("the stopped run is %s, not interrupted", st)
	}
	reviewed := c.checkFinished(run, c.finish(run))
	if effects := c.effects()[run]; len(effects) != steps {
		c.t.Fatalf("effects %v", effects)
	}
	c.ok("verify")
	return reviewed
}

// Ctrl-C typed while a tool call runs: the call finishes within the grace
// period and its result is committed, the run stops before its next step,
// rath says so in one sentence and exits 130.
func ctrlC(t *testing.T, c *built) {
	p, err := openPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer p.close()
	cmd := c.command("run", "cluster", "--input", heldInput(1500*time.Millisecond))
	p.attach(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	run := c.waitEffect(2, p.output)
	if err := p.typed("\x03"); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 130 {
		t.Fatalf("exit %d after Ctrl-C, want 130:\n%s", code, p.output())
	}
	// What rath wrote last may still be on its way through the terminal.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.output(), "resume "+string(run)) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	checkStopped(t, p.output(), run, "Ctrl-C")
	if c.effects()[run][3] != 0 {
		t.Fatal("a step began after Ctrl-C")
	}
	if n := c.resumed(run); n != 0 {
		t.Fatalf("%d calls needed a review: the call in flight at Ctrl-C had its result committed", n)
	}
}

// SIGTERM, as a supervisor sends it: the same, with exit code 143.
func sigterm(t *testing.T, c *built) {
	run, errb := c.stopped(t, syscall.SIGTERM, 143, 1500*time.Millisecond)
	checkStopped(t, errb, run, "SIGTERM")
	if n := c.resumed(run); n != 0 {
		t.Fatalf("%d calls needed a review", n)
	}
}

// A call still running when the grace period ends is given up: its effect
// is unknown, so the resumed run waits for a review of it.
func pastGrace(t *testing.T, c *built) {
	run, errb := c.stopped(t, syscall.SIGINT, 130, time.Minute, "--grace", "300ms")
	checkStopped(t, errb, run, "Ctrl-C")
	if n := c.resumed(run); n != 1 {
		t.Fatalf("%d calls settled by a review, want the one given up", n)
	}
}

// A second signal exits at once, still leaving a resumable run.
func secondSignal(t *testing.T, c *built) {
	run, _ := c.stopped(t, syscall.SIGINT, 130, time.Minute, "--again")
	waitInterrupted(t, c, run)
	if n := c.resumed(run); n != 1 {
		t.Fatalf("%d calls settled by a review, want the one cut short", n)
	}
}

// stopped starts `rath run cluster` whose second call holds for hold,
// sends sig once that call has begun (twice, 100 ms apart, if flags hold
// "--again"; the other flags go to rath run), and checks rath exits with
// code. It returns the run and what rath wrote on stderr.
func (c *built) stopped(t *testing.T, sig syscall.Signal, code int, hold time.Duration, flags ...string) (session.ID, string) {
	t.Helper()
	again := slices.Contains(flags, "--again")
	flags = slices.DeleteFunc(flags, func(f string) bool { return f == "--again" })
	cmd := c.command(append(append([]string{"run", "cluster"}, flags...), "--input", heldInput(hold))...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	run := c.waitEffect(2, errb.String)
	cmd.Process.Signal(sig)
	if again {
		time.Sleep(100 * time.Millisecond)
		cmd.Process.Signal(sig)
	}
	if got := exitOf(t, cmd); got != code {
		t.Fatalf("exit %d after %v, want %d:\n%s", got, sig, code, errb.String())
	}
	return run, errb.String()
}

// waitInterrupted waits for a run whose process exited to be shown
// interrupted (PostgreSQL frees a closed connection's advisory lock a
// moment after).
func waitInterrupted(t *testing.T, c *built, run session.ID) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); c.ls()[run].Status != rath.StatusInterrupted; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s 15 s after its process exited", run, c.ls()[run].Status)
		}
	}
}
