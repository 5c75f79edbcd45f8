package cluster_test

import (
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
)

// A call settled as not happened runs again, marked as begun first; its
// worker killed inside that run, the call is of unknown effect again and
// waits for a review of its own — it does not run a third time on the
// strength of the first review.
func TestRerunAfterReviewNeedsItsOwnReview(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		a := e.worker("a", "--slice-steps", "1000")
		id := e.submit(`{"steps":2,"latency_ms":5,"idempotent":false,"sleep_ms":10000,"sleep_on":1}`)
		key := string(id) + " 1"
		e.waitFor("a inside call 1", 30*time.Second, func() bool { return e.effectCounts()[key] == 1 })
		a.kill()
		b := e.worker("b", "--slice-steps", "1000")
		e.waitState(id, cluster.StateNeedsReview, 30*time.Second)
		if _, errOut, code := e.rath("review", string(id), "--not-happened", "--by", "dan"); code != 0 {
			t.Fatalf("review --not-happened: exit %d: %s", code, errOut)
		}
		e.waitFor("b inside call 1, run again", 30*time.Second, func() bool { return e.effectCounts()[key] == 2 })
		b.kill()
		e.worker("c")
		r := e.waitState(id, cluster.StateNeedsReview, 30*time.Second)
		if r.Review == nil || len(r.Review.Calls) != 1 || r.Review.Calls[0].ID != "call_1" {
			t.Fatalf("second review: %+v", r.Review)
		}
		time.Sleep(time.Second)
		if c := e.effectCounts()[key]; c != 2 {
			t.Fatalf("call 1 ran %d times; its second run was cut short and should wait for a review", c)
		}
		if _, errOut, code := e.rath("review", string(id), "--happened", "--by", "dan"); code != 0 {
			t.Fatalf("review --happened: exit %d: %s", code, errOut)
		}
		e.waitState(id, cluster.StateDone, 60*time.Second)
		if c := e.effectCounts(); c[key] != 2 || c[string(id)+" 2"] != 1 {
			t.Fatalf("effects %v", c)
		}
		e.verify(id)
	})
}
