package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
)

// On PostgreSQL a worker on another host that dies is found by the lock
// it held while it lived, long before its heartbeat's silence would count
// (DeadAfter is a minute here), and its run goes on elsewhere.
func TestDeadWorkerFoundByItsLock(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, home, freshDB(t))
	a := e.worker("a", "--host", "host-a", "--dead-after", "60s", "--slice-steps", "1000", "--offers", "lock=1")
	id := e.submit(`{"steps":40,"latency_ms":20,"idempotent":true}`, "--needs", "lock=1")
	e.waitFor("the run on a with effects", 30*time.Second, func() bool {
		return e.run(id).Worker == "a" && len(e.effectCounts()) >= 3
	})
	// a dies before b starts: on a loaded machine a run left going while
	// b starts may well end on a. b finds a dead by its lock, long before
	// DeadAfter.
	a.kill()
	e.worker("b", "--host", "host-b", "--dead-after", "60s", "--offers", "lock=1")
	r := e.waitState(id, cluster.StateDone, 40*time.Second)
	if r.Worker != "b" {
		t.Fatalf("finished by %s", r.Worker)
	}
	e.exactlyOnce(id, 40)
	rep, err := e.cl.Status(context.Background(), cluster.StatusOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Workers {
		if w.ID == "a" && (w.Alive || !strings.Contains(w.Why, "database session ended")) {
			t.Fatalf("worker a: alive %v, why %q", w.Alive, w.Why)
		}
	}
}
