package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/local"
	"github.com/openrath/rath/session"
)

// counting is the local backend, counting opens.
type counting struct {
	local.Backend
	opens, attaches atomic.Int64
}

func (c *counting) Open(ctx context.Context, spec session.Spec) (sandbox.Sandbox, error) {
	c.opens.Add(1)
	return c.Backend.Open(ctx, spec)
}

func (c *counting) Attach(ctx context.Context, id string, spec session.Spec) (sandbox.Sandbox, error) {
	c.attaches.Add(1)
	return c.Backend.Attach(ctx, id, spec)
}

var counter = &counting{}

func init() { sandbox.Register("counting-local", counter) }

func TestAcquireOpensOnceAndRecords(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	p := sandbox.NewPool()
	defer p.Close()
	s := session.FromUser("fix it").To("counting-local", session.Spec{})
	before := counter.opens.Load()
	const n = 20
	leases := make([]*sandbox.Lease, n)
	outs := make([]*session.Session, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l, out, err := p.Acquire(ctx, s)
			if err != nil {
				t.Error(err)
				return
			}
			leases[i], outs[i] = l, out
		})
	}
	wg.Wait()
	if got := counter.opens.Load() - before; got != 1 {
		t.Fatalf("%d parallel first uses opened %d sandboxes", n, got)
	}
	id := leases[0].ID()
	for i := range n {
		if leases[i].ID() != id {
			t.Fatalf("lease %d is on %s, not %s", i, leases[i].ID(), id)
		}
		pl := outs[i].Placement()
		if pl.SandboxID != id || !strings.HasPrefix(pl.TreeHash, "sha256:") || pl.Backend != "counting-local" {
			t.Fatalf("recorded placement = %+v", pl)
		}
	}
	// The recorded session finds the same sandbox while it is leased.
	l2, same, err := p.Acquire(ctx, outs[0])
	if err != nil || l2.ID() != id || same != outs[0] {
		t.Fatalf("reacquire: %v %v", l2, err)
	}
	if err := l2.WriteFile(ctx, "note.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	l2.Release()
	for _, l := range leases {
		l.Release()
	}
	if _, err := leases[0].ReadFile(ctx, "note.txt"); !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("the sandbox is still open after its last lease: %v", err)
	}
	// A restart: a new pool reattaches the recorded sandbox by id.
	p2 := sandbox.NewPool()
	defer p2.Close()
	attaches := counter.attaches.Load()
	l3, _, err := p2.Acquire(ctx, outs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Release()
	if b, err := l3.ReadFile(ctx, "note.txt"); err != nil || string(b) != "kept" || l3.ID() != id || counter.attaches.Load() != attaches+1 {
		t.Fatalf("reattached %s: %q, %v", l3.ID(), b, err)
	}
}

func TestForkClonesWorkspace(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	ctx := context.Background()
	p := sandbox.NewPool()
	defer p.Close()
	parent := session.FromUser("task").To(local.Name, session.Spec{})
	lease, parent, err := p.Acquire(ctx, parent)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if err := lease.WriteFile(ctx, "main.go", []byte("package main\n")); err != nil {
		t.Fatal(err)
	}
	hash, _ := lease.TreeHash(ctx)
	a, err := p.Fork(ctx, parent, parent.Fork(), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Fork(ctx, parent, parent.Fork(), false)
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := a.Placement(), b.Placement()
	if pa.SandboxID == pb.SandboxID || pa.SandboxID == lease.ID() || pa.ClonedFrom != lease.ID() || pa.TreeHash != hash {
		t.Fatalf("fork placements %+v / %+v (parent %s, hash %s)", pa, pb, lease.ID(), hash)
	}
	la, _, err := p.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer la.Release()
	lb, _, err := p.Acquire(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Release()
	la.WriteFile(ctx, "main.go", []byte("package a\n"))
	lb.WriteFile(ctx, "b-only.txt", []byte("b"))
	if got, _ := lb.ReadFile(ctx, "main.go"); string(got) != "package main\n" {
		t.Fatalf("branch b sees branch a's write: %q", got)
	}
	if got, _ := lease.ReadFile(ctx, "main.go"); string(got) != "package main\n" {
		t.Fatalf("the parent sees a branch's write: %q", got)
	}
	if _, err := la.ReadFile(ctx, "b-only.txt"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("branch a sees branch b's file: %v", err)
	}
	shared, err := p.Fork(ctx, parent, parent.Fork(), true)
	if err != nil {
		t.Fatal(err)
	}
	ls, _, err := p.Acquire(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Release()
	if ls.ID() != lease.ID() {
		t.Fatalf("a shared fork got sandbox %s, not the parent's %s", ls.ID(), lease.ID())
	}
}

func TestPlacementErrorsAndSecrets(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	t.Setenv("RATH_POOL_SECRET", "s3cr3t-value-never-recorded")
	ctx := context.Background()
	p := sandbox.NewPool()
	defer p.Close()
	if _, _, err := p.Acquire(ctx, session.FromUser("x")); !errors.Is(err, sandbox.ErrNoPlacement) {
		t.Fatalf("no placement: %v", err)
	}
	if _, _, err := p.Acquire(ctx, session.FromUser("x").To("no-such-backend", session.Spec{})); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("unknown backend: %v", err)
	}
	s := session.FromUser("x").To(local.Name, session.Spec{SecretEnv: []string{"RATH_POOL_SECRET"}})
	l, out, err := p.Acquire(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	r, err := l.Exec(ctx, sandbox.Command{Args: []string{"env"}})
	if err != nil || !strings.Contains(string(r.Stdout), "s3cr3t-value-never-recorded") {
		t.Fatalf("the secret did not reach the command: %v", err)
	}
	var buf bytes.Buffer
	if err := session.Encode(&buf, out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "s3cr3t-value-never-recorded") || !strings.Contains(buf.String(), "RATH_POOL_SECRET") {
		t.Fatalf("placement chunk:\n%s", buf.String())
	}
}
