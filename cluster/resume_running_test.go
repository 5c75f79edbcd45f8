package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
)

// A run cancelled while a worker runs it — its agent's record ends with
// the cancelled call's error — is resumed and ends done from its committed
// steps, no effect twice.
func TestResumeRunCancelledWhileRunning(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		const steps = 8
		e.worker("a")
		id := e.submit(fmt.Sprintf(`{"steps":%d,"latency_ms":150,"idempotent":false}`, steps))
		e.waitFor("two effects", 30*time.Second, func() bool { return e.effectsOf(id) >= 2 })
		ctx := context.Background()
		if err := e.cl.Cancel(ctx, id, "dave", "wrong input"); err != nil {
			t.Fatal(err)
		}
		e.waitState(id, cluster.StateCancelled, 10*time.Second)
		if err := e.cl.Resume(ctx, id, "erin", "it was right"); err != nil {
			t.Fatal(err)
		}
		e.waitState(id, cluster.StateDone, 30*time.Second)
		e.exactlyOnce(id, steps)
		e.verify(id)
	})
}
