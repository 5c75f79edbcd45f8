// Package remotetest is the suite every remote sandbox backend passes
// against its fake, beyond the conformance suite (sandboxtest): placement
// as session state through a sandbox.Pool — what the placement records,
// reattaching, releasing on Close, forks with their own sandbox, pausing
// — and the faults every provider shows: a stream cut mid-output and a
// sandbox that expired.
package remotetest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Fake is what the suite needs of a fake provider.
type Fake interface {
	// URL is the API's base URL the placement records.
	URL() string
	// Sandboxes counts the sandboxes that have not ended.
	Sandboxes() int
	// Expire ends a sandbox as its lifetime running out would.
	Expire(id string)
}

// Harness is one backend under test.
type Harness struct {
	// Backend is the registry name.
	Backend string
	// Template is what the placement records a default sandbox was made
	// from.
	Template string
	// Secrets must never reach a session, its export or a command.
	Secrets []string
	// Use points the registered backend at a new fake for one test: one
	// whose fork goes through a snapshot if snapshot is set (else
	// through the provider's other way, or a copy), with the on-close
	// action onClose ("" for the default, kill).
	Use func(t *testing.T, snapshot bool, onClose string) Fake
	// Paused is the state a paused sandbox is listed in.
	Paused []string
	// NoSnapshots: the provider takes no snapshots (Use ignores snapshot).
	NoSnapshots bool
	// CutStream makes the fake break the next command's output stream
	// once it has sent that many bytes.
	CutStream func(fake Fake, after int)
	// Starts, if set, counts the commands the fake was asked to start.
	Starts func(fake Fake) int
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	t.Run("PlacementRecordsTheRemoteSandbox", func(t *testing.T) { testPlacement(t, h) })
	t.Run("ForkGetsItsOwnSandbox", func(t *testing.T) { testFork(t, h) })
	t.Run("OnClosePauseKeepsTheSandboxResumable", func(t *testing.T) { testPause(t, h) })
	t.Run("StreamCutMidOutputIsInterrupted", func(t *testing.T) { testCut(t, h) })
	t.Run("ExpiredSandboxIsOneClearError", func(t *testing.T) { testExpired(t, h) })
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// listed lists what the registered backend's provider holds.
func listed(t *testing.T, h Harness) []sandbox.Listed {
	t.Helper()
	pr, err := sandbox.ProviderOf(h.Backend)
	if err != nil || pr == nil {
		t.Fatalf("%s is not a remote backend (%v)", h.Backend, err)
	}
	ls, err := pr.List(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

func testPlacement(t *testing.T, h Harness) {
	fake := h.Use(t, false, "")
	ctx := testCtx(t)
	s := session.FromUser("place me").To(h.Backend, session.Spec{Env: map[string]string{"MODE": "test"}})
	pool := sandbox.NewPool()
	lease, placed, err := pool.Acquire(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	pl := placed.Placement()
	if pl.SandboxID != lease.ID() || pl.Remote == nil || pl.Remote.Provider != h.Backend || pl.Remote.URL != fake.URL() ||
		pl.Remote.Template != h.Template || pl.TreeHash == "" {
		t.Fatalf("placement = %+v (remote %+v)", pl, pl.Remote)
	}
	// The sandbox carries the session's id, and rath's marks, in its metadata.
	ls := listed(t, h)
	if len(ls) != 1 || ls[0].Session != string(s.ID()) || ls[0].ID != lease.ID() || ls[0].PID == 0 || ls[0].Backend != h.Backend {
		t.Fatalf("listed %+v", ls)
	}
	// No credential reaches the session, its export, or the sandbox's env.
	r, err := lease.Exec(ctx, sandbox.Command{Args: []string{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	var export bytes.Buffer
	if err := session.Encode(&export, placed); err != nil {
		t.Fatal(err)
	}
	for _, where := range []string{export.String(), string(r.Stdout)} {
		for _, secret := range h.Secrets {
			if strings.Contains(where, secret) {
				t.Fatal("a credential leaked into the session's export or the sandbox's environment")
			}
		}
	}
	if !strings.Contains(string(r.Stdout), "MODE=test") {
		t.Fatalf("the spec's env is missing: %s", r.Stdout)
	}
	if err := lease.WriteFile(ctx, "kept.txt", []byte("survives")); err != nil {
		t.Fatal(err)
	}
	lease.Release()

	// A resumed session (another pool: another process) reconnects to the
	// same sandbox and finds its files.
	other := sandbox.NewPool()
	again, same, err := other.Acquire(ctx, placed)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID() != pl.SandboxID || same != placed {
		t.Fatalf("reattached %s (placement %s), appended %v", again.ID(), pl.SandboxID, same != placed)
	}
	if b, err := again.ReadFile(ctx, "kept.txt"); err != nil || string(b) != "survives" {
		t.Fatalf("after reattaching: %q, %v", b, err)
	}
	again.Release()
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if fake.Sandboxes() != 1 {
		t.Fatalf("a pool that only reattached killed the sandbox: %d left", fake.Sandboxes())
	}
	// The pool that created it kills it on Close.
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if fake.Sandboxes() != 0 {
		t.Fatalf("%d sandboxes left after the creating pool closed", fake.Sandboxes())
	}
	if _, _, err := sandbox.NewPool().Acquire(ctx, placed); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("a killed sandbox without a snapshot: %v, want ErrNotFound (never a blank one)", err)
	}
}

func testFork(t *testing.T, h Harness) {
	for _, snapshot := range []bool{false, true} {
		if snapshot && h.NoSnapshots {
			continue
		}
		t.Run("snapshot="+strconv.FormatBool(snapshot), func(t *testing.T) {
			fake := h.Use(t, snapshot, "")
			ctx := testCtx(t)
			pool := sandbox.NewPool()
			defer pool.Close()
			parent := session.FromUser("fork me").To(h.Backend, session.Spec{})
			lease, parent, err := pool.Acquire(ctx, parent)
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.WriteFile(ctx, "shared.txt", []byte("before")); err != nil {
				t.Fatal(err)
			}
			lease.Release()
			child, err := pool.Fork(ctx, parent, parent.Fork(), false)
			if err != nil {
				t.Fatal(err)
			}
			cp, pp := child.Placement(), parent.Placement()
			if cp.SandboxID == pp.SandboxID || cp.ClonedFrom != pp.SandboxID || cp.Remote == nil || (cp.Remote.SnapshotID != "") != snapshot {
				t.Fatalf("child placement %+v (remote %+v) of %s", cp, cp.Remote, pp.SandboxID)
			}
			cl, child, err := pool.Acquire(ctx, child)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Release()
			if b, err := cl.ReadFile(ctx, "shared.txt"); err != nil || string(b) != "before" {
				t.Fatalf("the fork's copy: %q, %v", b, err)
			}
			if err := cl.WriteFile(ctx, "shared.txt", []byte("child")); err != nil {
				t.Fatal(err)
			}
			pl, _, err := pool.Acquire(ctx, parent)
			if err != nil {
				t.Fatal(err)
			}
			defer pl.Release()
			if b, _ := pl.ReadFile(ctx, "shared.txt"); string(b) != "before" {
				t.Fatalf("the child's write reached the parent: %q", b)
			}
			if !snapshot {
				return
			}
			// The fork's sandbox is gone: a resumed child is re-created from
			// the snapshot its placement names, and says so.
			cl.Release()
			fake.Expire(cp.SandboxID)
			re, again, err := sandbox.NewPool().Acquire(ctx, child)
			if err != nil {
				t.Fatal(err)
			}
			defer re.Release()
			if b, err := re.ReadFile(ctx, "shared.txt"); err != nil || string(b) != "before" {
				t.Fatalf("from the snapshot: %q, %v", b, err)
			}
			if np := again.Placement(); np.SandboxID != re.ID() || np.SandboxID == cp.SandboxID || np.ClonedFrom != cp.SandboxID {
				t.Fatalf("the re-created placement %+v", np)
			}
		})
	}
}

func testPause(t *testing.T, h Harness) {
	h.Use(t, false, "pause")
	ctx := testCtx(t)
	pool := sandbox.NewPool()
	lease, placed, err := pool.Acquire(ctx, session.FromUser("pause").To(h.Backend, session.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.WriteFile(ctx, "state.txt", []byte("paused with me")); err != nil {
		t.Fatal(err)
	}
	lease.Release()
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	ls := listed(t, h)
	if len(ls) != 1 || !contains(h.Paused, ls[0].State) {
		t.Fatalf("after Close: %+v, want one sandbox in %v", ls, h.Paused)
	}
	again, _, err := sandbox.NewPool().Acquire(ctx, placed)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	if b, err := again.ReadFile(ctx, "state.txt"); err != nil || string(b) != "paused with me" {
		t.Fatalf("resumed: %q, %v", b, err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// open opens a sandbox on the registered backend through a pool, which
// the test closes.
func open(t *testing.T, h Harness) sandbox.Sandbox {
	t.Helper()
	pool := sandbox.NewPool()
	t.Cleanup(func() { _ = pool.Close() })
	lease, _, err := pool.Acquire(testCtx(t), session.FromUser("open").To(h.Backend, session.Spec{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lease.Release)
	return lease
}

func testCut(t *testing.T, h Harness) {
	fake := h.Use(t, false, "")
	sb := open(t, h)
	ctx := testCtx(t)
	h.CutStream(fake, 400)
	r, err := sb.Exec(ctx, sandbox.Command{Shell: `echo $$ > pid; i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; sleep 30; echo finished`})
	if !errors.Is(err, sandbox.ErrInterrupted) || r.ExitCode == 0 {
		t.Fatalf("a cut stream: exit %d, err %v", r.ExitCode, err)
	}
	if strings.Contains(string(r.Stdout), "finished") {
		t.Fatal("the cut command ran to its end")
	}
	pid, err := sb.ReadFile(ctx, "pid")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(pid)))
	if _, err := os.Stat("/proc/" + strconv.Itoa(n)); n == 0 || err == nil {
		// The fake's processes are this host's: the interrupted command was
		// killed, not left running.
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(n) + "/stat")
		if !strings.Contains(string(st), ") Z ") {
			t.Fatalf("the interrupted command (pid %d) still runs", n)
		}
	}
}

func testExpired(t *testing.T, h Harness) {
	fake := h.Use(t, false, "")
	sb := open(t, h)
	ctx := testCtx(t)
	if _, err := sb.Exec(ctx, sandbox.Command{Args: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	fake.Expire(sb.ID())
	var before int
	if h.Starts != nil {
		before = h.Starts(fake)
	}
	_, err := sb.Exec(ctx, sandbox.Command{Args: []string{"true"}})
	if !errors.Is(err, sandbox.ErrNotFound) || !strings.Contains(err.Error(), "no longer exists") {
		t.Fatalf("exec in an expired sandbox: %v", err)
	}
	if h.Starts != nil {
		if n := h.Starts(fake) - before; n != 1 {
			t.Fatalf("an expired sandbox was asked %d times to start the command, want once", n)
		}
	}
	if _, err := sb.ReadFile(ctx, "x"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("read in an expired sandbox: %v", err)
	}
	if _, err := sandbox.Attach(ctx, h.Backend, sb.ID(), session.Spec{}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("attach to an expired sandbox: %v", err)
	}
}
