package opensandbox_test

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

func TestPlacementRecordsTheRemoteSandbox(t *testing.T) {
	srv := use(t, osfake.Options{}, nil)
	ctx := testCtx(t)
	s := session.FromUser("place me").To(opensandbox.Name, session.Spec{Env: map[string]string{"MODE": "test"}})
	pool := sandbox.NewPool()
	lease, placed, err := pool.Acquire(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	pl := placed.Placement()
	if pl.SandboxID != lease.ID() || pl.Remote == nil || pl.Remote.Provider != opensandbox.Name || pl.Remote.URL != srv.URL() ||
		pl.Remote.Template != "ubuntu:22.04" || pl.TreeHash == "" {
		t.Fatalf("placement = %+v (remote %+v)", pl, pl.Remote)
	}
	// The sandbox carries the session's id, and rath's marks, in its metadata.
	listed, err := opensandbox.New(optionsOf(srv)).List(ctx)
	if err != nil || len(listed) != 1 || listed[0].Session != string(s.ID()) || listed[0].ID != lease.ID() || listed[0].PID == 0 {
		t.Fatalf("listed %+v, %v", listed, err)
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
		if strings.Contains(where, testKey) || strings.Contains(where, testToken) {
			t.Fatalf("a credential leaked:\n%s", where)
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
	if srv.Sandboxes() != 1 {
		t.Fatalf("a pool that only reattached killed the sandbox: %d left", srv.Sandboxes())
	}
	// The pool that created it kills it on Close.
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if srv.Sandboxes() != 0 {
		t.Fatalf("%d sandboxes left after the creating pool closed", srv.Sandboxes())
	}
	if _, _, err := sandbox.NewPool().Acquire(ctx, placed); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("a killed sandbox without a snapshot: %v, want ErrNotFound (never a blank one)", err)
	}
}

func TestForkGetsItsOwnSandbox(t *testing.T) {
	for _, c := range []struct {
		name     string
		fo       osfake.Options
		snapshot bool
	}{
		{"snapshot", osfake.Options{}, true},
		{"copy", osfake.Options{NoSnapshots: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := use(t, c.fo, nil)
			ctx := testCtx(t)
			pool := sandbox.NewPool()
			defer pool.Close()
			parent := session.FromUser("fork me").To(opensandbox.Name, session.Spec{})
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
			if cp.SandboxID == pp.SandboxID || cp.ClonedFrom != pp.SandboxID || cp.Remote == nil || (cp.Remote.SnapshotID != "") != c.snapshot {
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
			if !c.snapshot {
				return
			}
			// The fork's sandbox is gone: a resumed child is re-created from
			// the snapshot its placement names, and says so.
			cl.Release()
			srv.Expire(cp.SandboxID)
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

func TestOnClosePauseKeepsTheSandboxResumable(t *testing.T) {
	srv := use(t, osfake.Options{}, func(o *opensandbox.Options) { o.OnClose = opensandbox.OnClosePause })
	ctx := testCtx(t)
	pool := sandbox.NewPool()
	lease, placed, err := pool.Acquire(ctx, session.FromUser("pause").To(opensandbox.Name, session.Spec{}))
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
	listed, err := opensandbox.New(optionsOf(srv)).List(ctx)
	if err != nil || len(listed) != 1 || (listed[0].State != "Paused" && listed[0].State != "Pausing") {
		t.Fatalf("after Close: %+v, %v", listed, err)
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

// A listing across providers skips an OpenSandbox that cannot be reached.
func TestUnreachableListIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	o := opensandbox.Options{APIURL: "http://" + addr + "/v1", Retry: remote.Retry{Attempts: 2, Base: time.Millisecond}}
	if _, err := opensandbox.New(o).List(testCtx(t)); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("listing an OpenSandbox that is not there: %v", err)
	}
}
