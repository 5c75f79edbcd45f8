package cluster_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/store"
)

// A worker taken for dead while paused that took one more run before it
// learnt so, and was then killed, leaves a job running under a client
// whose record is already dead: no reap looks at it again. A live worker
// hands such a job on, and the run finishes, each effect once.
func TestJobOfAWorkerAlreadyDeadIsHandedOn(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.worker("a", "--slice-steps", "1000")
		id := e.submit(`{"steps":30,"latency_ms":40,"idempotent":true}`)
		e.waitFor("the run on a with effects", 30*time.Second, func() bool {
			return e.run(id).Worker == "a" && len(e.effectCounts()) >= 2
		})
		holder := e.run(id).Holder
		// a dies; what a reap did before a took the run is then done to
		// its record (no other worker lives to reap it meanwhile): it
		// says dead and its session failed; its job is left running.
		a.kill()
		st := e.rt.Store
		info, err := st.Info(ctx, holder.Session)
		if err != nil {
			t.Fatal(err)
		}
		rec := map[string]any{}
		if err := json.Unmarshal([]byte(info.Labels[cluster.LabelWorker]), &rec); err != nil {
			t.Fatal(err)
		}
		rec["state"], rec["alive"], rec["why"] = "dead", false, "taken for dead by the test before it took its last run"
		b, _ := json.Marshal(rec)
		if err := st.SetLabel(ctx, holder.Session, cluster.LabelWorker, string(b)); err != nil {
			t.Fatal(err)
		}
		if err := store.MoveTo(ctx, st, holder.Session, store.StatusFailed); err != nil {
			t.Fatal(err)
		}

		e.worker("b")
		r := e.waitState(id, cluster.StateDone, 90*time.Second)
		if r.Worker != "b" {
			t.Fatalf("finished by %s", r.Worker)
		}
		e.exactlyOnce(id, 30)
		e.verify(id)
	})
}
