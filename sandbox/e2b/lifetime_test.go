package e2b_test

import (
	"errors"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/session"
)

// A sandbox outlives its lifetime while a handle on it is open (the handle
// renews it), and ends when its lifetime runs out after the handle closed.
func TestOpenHandleKeepsTheSandboxAlive(t *testing.T) {
	for _, c := range []struct {
		name string
		fo   e2bfake.Options
	}{{"e2b", e2bfake.Options{}}, {"cube", e2bfake.Options{Cube: true, Domain: "cube.test"}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, b := startFake(t, c.fo)
			o := b.Options()
			o.Lifetime, o.RenewEvery = 2*time.Second, 300*time.Millisecond
			b = e2b.New(o)
			ctx := testCtx(t)
			held := open(t, b, session.Spec{})
			defer held.Close()
			dropped := open(t, b, session.Spec{})
			if err := dropped.Close(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(4 * time.Second) // twice the lifetime
			if r, err := held.Exec(ctx, sandbox.Command{Args: []string{"true"}}); err != nil || r.ExitCode != 0 {
				t.Fatalf("the held sandbox after twice its lifetime: exit %d, %v", r.ExitCode, err)
			}
			if _, err := b.Attach(ctx, dropped.ID(), session.Spec{}); !errors.Is(err, sandbox.ErrNotFound) {
				t.Fatalf("the sandbox whose handle closed, after twice its lifetime: %v (want it ended)", err)
			}
		})
	}
}
