package opensandbox_test

import (
	"os"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/sandboxtest"
	"github.com/openrath/rath/session"
)

// liveBackend is the real OpenSandbox the environment names, or a skip:
// OPEN_SANDBOX_API_URL (and OPEN_SANDBOX_API_KEY where the server wants
// one) point these tests at a deployment; OPEN_SANDBOX_IMAGE picks the
// image (default ubuntu:22.04).
func liveBackend(t *testing.T) *opensandbox.Backend {
	t.Helper()
	if os.Getenv("OPEN_SANDBOX_API_URL") == "" && os.Getenv("OPEN_SANDBOX_API_KEY") == "" {
		t.Skip("live OpenSandbox tests: set OPEN_SANDBOX_API_URL (and OPEN_SANDBOX_API_KEY) to run them against a real deployment")
	}
	b := opensandbox.New(opensandbox.FromEnv())
	if err := b.Available(testCtx(t)); err != nil {
		t.Fatalf("OpenSandbox at OPEN_SANDBOX_API_URL: %v", err)
	}
	return b
}

func TestLiveConformance(t *testing.T) {
	b := liveBackend(t)
	var opened []string
	t.Cleanup(func() {
		for _, id := range opened {
			_ = b.Kill(testCtx(t), id)
		}
	})
	sandboxtest.Run(t, func(t *testing.T, spec session.Spec) sandbox.Sandbox {
		sb := open(t, b, spec)
		opened = append(opened, sb.ID())
		return sb
	})
}

func TestLivePoolReleasesWhatItCreated(t *testing.T) {
	b := liveBackend(t)
	if err := opensandbox.Use(opensandbox.FromEnv()); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	pool := sandbox.NewPool()
	s := session.FromUser("live").To(opensandbox.Name, session.Spec{})
	lease, placed, err := pool.Acquire(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	id := placed.Placement().SandboxID
	listed, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range listed {
		found = found || (l.ID == id && l.Session == string(s.ID()))
	}
	if !found {
		t.Fatalf("sandbox %s is not listed with its session: %+v", id, listed)
	}
	lease.Release()
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	listed, err = b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
		if l.ID == id && l.State == "Running" {
			t.Fatalf("sandbox %s still runs after its pool closed", id)
		}
	}
}
