package cluster_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	clusterdemo "github.com/openrath/rath/examples/14_cluster"
	"github.com/openrath/rath/session"
)

// A worker paused (SIGSTOP) inside a call to a tool that is not idempotent
// — before the call's effect — is taken for dead and its runs handed on;
// they wait in needs_review. It is not dead: status says it may still
// exist, and a review as not happened is refused while it does (or, forced,
// says so in the record). Woken (SIGCONT), it finds it was taken for dead,
// stops its calls before their effects and exits; then the refused review
// goes through. Each call's effect happens exactly once.
func TestPausedHolderIsNotDead(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		a := e.worker("a", "--slice-steps", "1000", "--concurrency", "2")
		input := `{"steps":2,"latency_ms":5,"idempotent":false,"sleep_ms":600000,"sleep_on":1,"sleep_before":true}`
		waited, forced := e.submit(input), e.submit(input)
		e.waitFor("a inside call 1 of both runs, before their effects", 30*time.Second, func() bool {
			b := e.begun()
			return b[string(waited)+" 1"] == 1 && b[string(forced)+" 1"] == 1
		})
		e.pause(a)
		e.worker("b")
		for _, id := range []session.ID{waited, forced} {
			r := e.waitState(id, cluster.StateNeedsReview, 30*time.Second)
			if r.Review == nil || len(r.Review.Calls) != 1 || r.Review.Calls[0].ID != "call_1" {
				t.Fatalf("review of %s: %+v", id, r.Review)
			}
			if len(r.Previous) != 1 || r.Previous[0].Worker != "a" || !r.Previous[0].MayExist {
				t.Fatalf("previous holders of %s: %+v", id, r.Previous)
			}
		}
		out, _, code := e.rath("status", string(waited))
		if code != 0 || !strings.Contains(out, "previous holder: worker a") || !strings.Contains(out, "may still exist") || !strings.Contains(out, "stopped") {
			t.Fatalf("status (%d):\n%s", code, out)
		}
		if c := e.effectCounts(); c[string(waited)+" 1"] != 0 || c[string(forced)+" 1"] != 0 {
			t.Fatalf("effects before any review: %v", c)
		}

		// The effect log has no effect 1: truthfully, it has not happened —
		// yet. Its worker may still make it, so the review waits.
		_, errOut, code := e.rath("review", string(waited), "--not-happened", "--by", "dan")
		if code == 0 || !strings.Contains(errOut, "may still exist") || !strings.Contains(errOut, "worker a") || !strings.Contains(errOut, "--force") {
			t.Fatalf("review --not-happened while a is paused: exit %d: %s", code, errOut)
		}
		t.Logf("refused: %s", strings.TrimSpace(errOut))
		if r := e.run(waited); r.State != cluster.StateNeedsReview {
			t.Fatalf("a refused review moved the run to %s", r.State)
		}
		_, errOut, code = e.rath("review", string(forced), "--not-happened", "--force", "--by", "dan", "--reason", "urgent")
		if code != 0 || !strings.Contains(errOut, "warning: --force") {
			t.Fatalf("review --not-happened --force: exit %d: %s", code, errOut)
		}
		fr := e.waitState(forced, cluster.StateDone, 60*time.Second)

		woke := time.Now()
		a.signal(syscall.SIGCONT)
		select {
		case <-a.done:
			a.done <- nil // for the cleanup's kill
		case <-time.After(20 * time.Second):
			t.Fatalf("a woke up taken for dead and did not stop\n%s", e.logs())
		}
		if time.Since(woke) > 15*time.Second || !strings.Contains(a.out.String(), "taken for dead") {
			t.Fatalf("a stopped %s after waking; its log:\n%s", time.Since(woke), a.out.String())
		}
		if c := e.effectCounts(); c[string(waited)+" 1"] != 0 {
			t.Fatalf("a made the effect of a call it had lost: %v", c)
		}
		if out, _, _ := e.rath("status", string(waited)); !strings.Contains(out, "previous holder: worker a") || !strings.Contains(out, "is gone") {
			t.Fatalf("status once a is gone:\n%s", out)
		}
		if _, errOut, code := e.rath("review", string(waited), "--not-happened", "--by", "dan", "--reason", "not in the log, and a is gone"); code != 0 {
			t.Fatalf("review --not-happened once a is gone: exit %d: %s", code, errOut)
		}
		e.waitState(waited, cluster.StateDone, 60*time.Second)

		e.exactlyOnce(waited, 2)
		e.exactlyOnce(forced, 2)
		e.verify(waited)
		e.verify(forced)
		outS, err := e.rt.Store.Load(context.Background(), fr.Output)
		if err != nil {
			t.Fatal(err)
		}
		var noted bool
		for _, ch := range outS.All() {
			if ap := ch.Approval; ap != nil && ap.Verdict == session.VerdictNotHappened {
				noted = strings.Contains(ap.Reason, "urgent") && strings.Contains(ap.Reason, "forced while worker a")
			}
		}
		if !noted {
			t.Fatal("the forced review does not say it was forced, over whom")
		}
	})
}

// begun counts the calls noted as begun by "<run> <n>" (a tool sleeping
// before its effect notes them).
func (e *env) begun() map[string]int {
	e.t.Helper()
	f, err := os.Open(clusterdemo.BegunLog(e.effects))
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 4 {
			counts[fields[1]+" "+fields[2]]++
		}
	}
	return counts
}
