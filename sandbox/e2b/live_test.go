package e2b_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

// The live tests run against the real services, configured as the
// registered backends are (e2b.FromEnv): E2B when E2B_API_KEY is set
// (E2B_DOMAIN, E2B_API_URL and E2B_TEMPLATE as usual), Cube Sandbox when
// CUBE_API_URL is set (CUBE_API_KEY, CUBE_DOMAIN, CUBE_CA_FILE and
// CUBE_TEMPLATE as usual). Without their variable they skip. They kill
// every sandbox they create, whatever RATH_REMOTE_ON_CLOSE says, and
// never log a credential.

// liveLifetime bounds what a failed or interrupted run leaves behind.
const liveLifetime = 5 * time.Minute

// liveOptions returns the provider's options from the environment, or
// skips the test naming the variable that is missing.
func liveOptions(t *testing.T, provider string) e2b.Options {
	t.Helper()
	need := "E2B_API_KEY"
	if provider == e2b.Cube {
		need = "CUBE_API_URL"
	}
	if os.Getenv(need) == "" {
		t.Skipf("set %s to run the live %s tests", need, provider)
	}
	o := e2b.FromEnv(provider)
	o.OnClose, o.Lifetime = e2b.OnCloseKill, liveLifetime
	return o
}

// sweepLive kills, when the test ends, every sandbox this process created
// that is still listed (clones the suite made, and what a failure left).
// Call it first, so that it runs after the test's other cleanups.
func sweepLive(t *testing.T, b *e2b.Backend) {
	host, _ := os.Hostname()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		listed, err := b.List(ctx)
		if err != nil {
			t.Errorf("listing the sandboxes this test left: %v", err)
			return
		}
		for _, l := range listed {
			if l.Host == host && l.PID == os.Getpid() {
				killLive(ctx, t, b, l.ID)
			}
		}
	})
}

func killLive(ctx context.Context, t *testing.T, b *e2b.Backend, id string) {
	if err := b.Kill(ctx, id); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("killing sandbox %s: %v", id, err)
	}
}

func TestLiveConformanceE2B(t *testing.T)  { liveConformance(t, e2b.E2B) }
func TestLiveConformanceCube(t *testing.T) { liveConformance(t, e2b.Cube) }

// liveConformance runs the conformance suite on the real service, each
// sandbox killed when its case ends.
func liveConformance(t *testing.T, provider string) {
	b := e2b.New(liveOptions(t, provider))
	sweepLive(t, b)
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox {
		sb := open(t, b, spec)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			killLive(ctx, t, b, sb.ID())
		})
		return sb
	})
}

func TestLivePoolE2B(t *testing.T)  { livePool(t, e2b.E2B) }
func TestLivePoolCube(t *testing.T) { livePool(t, e2b.Cube) }

// livePool opens a session's sandbox through a pool on the registered
// backend: the sandbox's metadata names the session, this host and this
// process; no credential reaches its environment; the pool's Close kills
// it, and the listing shows it gone.
func livePool(t *testing.T, provider string) {
	o := liveOptions(t, provider)
	b := e2b.New(o)
	sweepLive(t, b)
	if err := e2b.Use(provider, o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e2b.Use(provider, e2b.FromEnv(provider)) })
	ctx := testCtx(t)

	s := session.FromUser("live pool").To(provider, session.Spec{})
	pool := sandbox.NewPool()
	lease, placed, err := pool.Acquire(ctx, s)
	if err != nil {
		_ = pool.Close()
		t.Fatal(err)
	}
	id := lease.ID()
	pl := placed.Placement()
	if pl.SandboxID != id || pl.Remote == nil || pl.Remote.Provider != provider || pl.Remote.Template == "" {
		t.Errorf("placement = %+v (remote %+v)", pl, pl.Remote)
	}

	host, _ := os.Hostname()
	var l sandbox.Listed
	found := waitListed(ctx, t, b, func(ls []sandbox.Listed) bool {
		i := slices.IndexFunc(ls, func(x sandbox.Listed) bool { return x.ID == id })
		if i >= 0 {
			l = ls[i]
		}
		return i >= 0
	})
	switch {
	case !found:
		t.Errorf("sandbox %s is not listed with rath's metadata", id)
	case l.Session != string(s.ID()) || l.Host != host || l.PID != os.Getpid():
		t.Errorf("listed as session %q, host %q, pid %d; want %q, %q, %d", l.Session, l.Host, l.PID, s.ID(), host, os.Getpid())
	}

	r, err := lease.Exec(ctx, sandbox.Command{Args: []string{"env"}})
	if err != nil {
		t.Error(err)
	} else if o.APIKey != "" && strings.Contains(string(r.Stdout), o.APIKey) {
		t.Error("the API key reached the sandbox's environment") // not printed
	}

	lease.Release()
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if !waitListed(ctx, t, b, func(ls []sandbox.Listed) bool {
		return !slices.ContainsFunc(ls, func(x sandbox.Listed) bool { return x.ID == id })
	}) {
		t.Fatalf("sandbox %s is still listed after the pool that created it closed", id)
	}
}

// waitListed lists the backend's sandboxes until ok says yes, for up to a
// minute (a listing may trail a create or a kill by a moment).
func waitListed(ctx context.Context, t *testing.T, b *e2b.Backend, ok func([]sandbox.Listed) bool) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ls, err := b.List(ctx)
		if err != nil {
			t.Errorf("listing: %v", err)
			return false
		}
		if ok(ls) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(2 * time.Second):
		}
	}
}
