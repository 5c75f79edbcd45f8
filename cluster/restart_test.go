package cluster_test

import (
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
)

// A worker killed and started again under its own name, with no other
// worker alive, reaps its earlier process and takes the run back: a
// reaper leaves alone only its own record, not every one under its name.
func TestRestartedUnderItsNameTakesItsRunBack(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		a := e.worker("a", "--slice-steps", "1000") // the whole run is one slice on a
		id := e.submit(`{"steps":40,"latency_ms":20,"idempotent":true}`)
		e.waitFor("the run on a with effects", 30*time.Second, func() bool {
			return e.run(id).Worker == "a" && len(e.effectCounts()) >= 3
		})
		a.kill()
		e.worker("a")
		r := e.waitState(id, cluster.StateDone, 60*time.Second)
		if r.Worker != "a" || r.Slices < 2 {
			t.Fatalf("finished by %s in %d slices", r.Worker, r.Slices)
		}
		e.exactlyOnce(id, 40)
		e.verify(id)
	})
}
