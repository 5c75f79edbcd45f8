package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// A worker killed while a non-idempotent call runs leaves its run in
// needs_review; each way of settling it works: happened (with a result),
// not happened (the call runs again), abort (the run ends).
func TestNeedsReviewAndEachSettlement(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		a := e.worker("a", "--slice-steps", "1000", "--concurrency", "3")
		input := `{"steps":3,"latency_ms":5,"idempotent":false,"sleep_ms":10000,"sleep_on":1}`
		happened, notHappened, aborted := e.submit(input), e.submit(input), e.submit(input)
		runs := []session.ID{happened, notHappened, aborted}
		e.waitFor("every run inside its first call", 30*time.Second, func() bool {
			c := e.effectCounts()
			return c[string(happened)+" 1"] == 1 && c[string(notHappened)+" 1"] == 1 && c[string(aborted)+" 1"] == 1
		})
		a.kill()
		e.worker("b")
		for _, id := range runs {
			r := e.waitState(id, cluster.StateNeedsReview, 30*time.Second)
			if r.Review == nil || len(r.Review.Calls) != 1 || r.Review.Calls[0].Name != "record_effect" {
				t.Fatalf("review of %s: %+v", id, r.Review)
			}
		}
		out, _, code := e.rath("pending")
		if code != 0 || strings.Count(out, "needs_review") != 3 || !strings.Contains(out, "record_effect") {
			t.Fatalf("pending (%d):\n%s", code, out)
		}
		// Nothing was retried on its own.
		if c := e.effectCounts(); c[string(happened)+" 1"] != 1 || c[string(happened)+" 2"] != 0 {
			t.Fatalf("effects while waiting for review: %v", c)
		}

		result := filepath.Join(e.home, "result.txt")
		if err := os.WriteFile(result, []byte("effect 1 recorded (seen in the ledger)"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, errOut, code := e.rath("review", string(happened), "--happened", "--result", "@"+result, "--by", "dan", "--reason", "the ledger has it"); code != 0 {
			t.Fatalf("review --happened: %d %s", code, errOut)
		}
		if _, errOut, code := e.rath("review", string(notHappened), "--not-happened", "--by", "dan", "--reason", "not in the ledger"); code != 0 {
			t.Fatalf("review --not-happened: %d %s", code, errOut)
		}
		if _, errOut, code := e.rath("review", string(aborted), "--abort", "--by", "dan", "--reason", "unsure; stop"); code != 0 {
			t.Fatalf("review --abort: %d %s", code, errOut)
		}
		if _, _, code := e.rath("review", string(happened), "--happened"); code == 0 {
			t.Fatal("a second review was accepted")
		}

		r := e.waitState(happened, cluster.StateDone, 30*time.Second)
		c := e.effectCounts()
		if c[string(happened)+" 1"] != 1 || c[string(happened)+" 2"] != 1 || c[string(happened)+" 3"] != 1 {
			t.Fatalf("happened: effects %v", c)
		}
		outS, err := e.rt.Store.Load(context.Background(), r.Output)
		if err != nil {
			t.Fatal(err)
		}
		var review, res1 bool
		for _, ch := range outS.All() {
			if ap := ch.Approval; ap != nil && ap.Verdict == session.VerdictHappened && ap.By == "dan" && ap.Reason == "the ledger has it" {
				review = true
			}
			if tr := ch.ToolResult; tr != nil && tr.CallID == "call_1" && tr.Content == "effect 1 recorded (seen in the ledger)" {
				res1 = true
			}
		}
		if !review || !res1 {
			t.Fatalf("output lacks the review (%v) or the given result (%v)", review, res1)
		}
		e.verify(happened)

		e.waitState(notHappened, cluster.StateDone, 90*time.Second)
		c = e.effectCounts()
		if c[string(notHappened)+" 1"] != 2 || c[string(notHappened)+" 3"] != 1 {
			t.Fatalf("not happened: the call should have run again: %v", c)
		}

		d := e.waitState(aborted, cluster.StateFailed, 30*time.Second)
		if !strings.Contains(d.Error, "ended by a review") {
			t.Fatalf("aborted: %s", d.Error)
		}
		if c[string(aborted)+" 2"] != 0 {
			t.Fatal("an aborted run went on")
		}
	})
}

// A worker paused (SIGSTOP) past takeover wakes up to find its run taken:
// it finds it was taken for dead and commits nothing more (had it not yet
// found out, the fencing epoch would refuse its late commit), and nothing
// is duplicated.
func TestZombieIsFencedOut(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		a := e.worker("a", "--slice-steps", "1000")
		id := e.submit(`{"steps":4,"latency_ms":5,"idempotent":true,"sleep_ms":4000,"sleep_on":2}`)
		e.waitFor("a inside call 2", 30*time.Second, func() bool { return e.effectCounts()[string(id)+" 2"] == 1 })
		e.pause(a)
		e.worker("b")
		r := e.waitState(id, cluster.StateDone, 60*time.Second)
		if r.Worker != "b" {
			t.Fatalf("finished by %s", r.Worker)
		}
		a.signal(syscall.SIGCONT)
		e.waitFor("a's late commit refused", 20*time.Second, func() bool {
			out := a.out.String()
			return strings.Contains(out, "fenced out") || strings.Contains(out, "run lost")
		})
		e.exactlyOnce(id, 4)
		e.verify(id)
		outS, err := e.rt.Store.Load(context.Background(), r.Output)
		if err != nil {
			t.Fatal(err)
		}
		results := map[string]int{}
		for _, ch := range outS.All() {
			if ch.ToolResult != nil {
				results[ch.ToolResult.CallID]++
			}
		}
		if len(results) != 4 {
			t.Fatalf("tool results by call: %v", results)
		}
		for call, n := range results {
			if n != 1 {
				t.Fatalf("call %s has %d results", call, n)
			}
		}
		if e.run(id).State != cluster.StateDone {
			t.Fatal("the zombie changed the run's state")
		}
	})
}
