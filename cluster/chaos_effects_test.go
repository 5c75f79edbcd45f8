package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// Chaos over a tool that is not idempotent: it appends every execution to
// the effect log, with no de-duplication of its own. Three workers work
// the runs; a random one is killed with SIGKILL every second or two and
// started again — or, every third time, paused (SIGSTOP) for a few seconds
// and woken (it exits if it was taken for dead meanwhile, and is started
// again). A run whose worker died inside a call waits in needs_review
// naming the call; the test settles it as a person would, from the raw
// log, once no worker that ran it may still exist: happened if the log
// holds the call's effect, else not happened. At the end every run is done, its chain verifies, each call's
// effect is in the log exactly once, and each call has one result in the
// run's output: no call ran twice without a review, and no review was
// needed for a call that ran nowhere.
func TestChaosNotIdempotent(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos takes minutes; not in -short")
	}
	backends(t, func(t *testing.T, e *env) {
		attempts := filepath.Join(e.home, "attempts.log")
		os.Setenv("RATH_ATTEMPT_LOG", attempts)
		defer os.Unsetenv("RATH_ATTEMPT_LOG")
		const runs, steps = 150, 8
		names := []string{"w0", "w1", "w2"}
		procs := map[string]*proc{}
		for _, n := range names {
			procs[n] = e.worker(n, "--concurrency", "8", "--slice-steps", "3")
		}
		began := time.Now()
		ids := make([]session.ID, 0, runs)
		// Each call sleeps 150 ms after its effect, so kills land inside
		// calls as well as between them.
		text := fmt.Sprintf(`{"steps":%d,"latency_ms":250,"idempotent":false,"sleep_ms":150}`, steps)
		for range runs {
			id, err := e.cl.Submit(context.Background(), "cluster", cluster.SubmitOptions{Input: &text})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		kills, pauses, exits := 0, 0, 0
		paused := map[string]time.Time{} // worker -> when it is woken
		woken := map[string]bool{}       // woken, and may exit (taken for dead)
		reviews := map[string]string{}   // "<run> <n>" -> verdict
		deadline := time.Now().Add(6 * time.Minute)
		// The last two minutes are quiet: no kill or pause begins, so a
		// run that a loaded machine kept interrupting finishes, and one
		// that no worker would ever finish (stranded) still shows.
		quiet := deadline.Add(-2 * time.Minute)
		nextKill := time.Now().Add(time.Second)
		finished := map[session.ID]bool{}
		for {
			for _, id := range ids {
				if finished[id] {
					continue
				}
				info, err := e.rt.Store.Info(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				r, err := cluster.RunOf(info)
				if err != nil {
					t.Fatal(err)
				}
				switch r.State {
				case cluster.StateDone:
					finished[id] = true
				case cluster.StateNeedsReview:
					e.settleFromLog(e.run(id), reviews) // as status shows it
				case cluster.StateFailed, cluster.StateCancelled:
					t.Fatalf("run %s ended %s: %s\n%s", id, r.State, r.Error, e.logs())
				}
			}
			done := len(finished)
			if done == runs {
				break
			}
			if time.Now().After(deadline) {
				var left []string
				for _, id := range ids {
					if r := e.run(id); r.State != cluster.StateDone {
						b, _ := json.MarshalIndent(r, "", "  ")
						left = append(left, string(b), e.cl.JobsOfRun(context.Background(), id))
					}
				}
				t.Fatalf("%d of %d runs done after %d kills; the others:\n%s\n%s", done, runs, kills, strings.Join(left, "\n"), e.logs())
			}
			for n, at := range paused {
				if time.Now().After(at) {
					procs[n].signal(syscall.SIGCONT)
					delete(paused, n)
					woken[n] = true
				}
			}
			for n := range woken {
				select {
				case <-procs[n].done: // it found it was taken for dead
					procs[n].done <- nil
					delete(woken, n)
					exits++
					procs[n] = e.worker(n, "--concurrency", "8", "--slice-steps", "3")
				default:
				}
			}
			if now := time.Now(); now.After(nextKill) && now.Before(quiet) {
				n := names[rng.IntN(len(names))]
				_, isPaused := paused[n]
				if kills%3 == 2 && !isPaused && !woken[n] {
					// Every third time a pause instead: SIGSTOP for 2-6 s,
					// past DeadAfter (3 s) or not.
					e.pause(procs[n])
					pauses++
					paused[n] = time.Now().Add(time.Duration(2000+rng.IntN(4000)) * time.Millisecond)
				} else {
					procs[n].kill()
					delete(paused, n)
					delete(woken, n)
					procs[n] = e.worker(n, "--concurrency", "8", "--slice-steps", "3")
				}
				kills++
				nextKill = time.Now().Add(time.Duration(1000+rng.IntN(1500)) * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
		}
		wall := time.Since(began)
		happened := 0
		for _, v := range reviews {
			if v == session.VerdictHappened {
				happened++
			}
		}
		t.Logf("%d runs of %d calls done in %s with %d SIGKILLs and %d SIGSTOPs (%d woke taken for dead, and exited); %d calls went to needs_review (%d happened, %d not happened)",
			runs, steps, wall.Round(time.Millisecond), kills-pauses, pauses, exits, len(reviews), happened, len(reviews)-happened)
		if kills < 5 || pauses < 1 {
			t.Fatalf("only %d kills: the test proved little", kills)
		}
		counts := e.effectCounts()
		for _, id := range ids {
			for i := 1; i <= steps; i++ {
				if c := counts[fmt.Sprintf("%s %d", id, i)]; c != 1 {
					b, _ := os.ReadFile(attempts)
					var lines []string
					for l := range strings.SplitSeq(string(b), "\n") {
						if strings.HasPrefix(l, string(id)+" ") {
							lines = append(lines, l)
						}
					}
					_, history, _ := e.cl.RunStatus(context.Background(), id)
					var hs []string
					for _, ch := range history {
						if ch.Decision != nil {
							hs = append(hs, ch.Decision.Reason)
						}
					}
					t.Fatalf("run %s: effect %d appears %d times; reviews %v\nexecutions (run n pid start end):\n%s\nhistory:\n%s\n%s",
						id, i, c, reviews, strings.Join(lines, "\n"), strings.Join(hs, "\n"), e.logs())
				}
			}
			e.verify(id)
			e.oneResultEach(id, steps)
		}
		checkNoOverlap(t, attempts)
	})
}

// settleFromLog settles a run in needs_review as a person would: once no
// worker that ran its calls may still exist (one only paused may wake up
// and finish its call), each unsettled call happened if the effect log
// holds its effect, else not.
func (e *env) settleFromLog(r *cluster.Run, reviews map[string]string) {
	e.t.Helper()
	if r.Review == nil || len(r.Review.Calls) == 0 {
		e.t.Fatalf("run %s in needs_review names no call", r.ID)
	}
	for _, h := range r.Previous {
		if h.MayExist {
			return // later: it may still make the effect
		}
	}
	counts := e.effectCounts()
	for _, call := range r.Review.Calls {
		var args struct {
			N int `json:"n"`
		}
		if call.Name != "record_effect" || json.Unmarshal(call.Args, &args) != nil || args.N == 0 {
			e.t.Fatalf("run %s: unsettled call %+v", r.ID, call)
		}
		key := fmt.Sprintf("%s %d", r.ID, args.N)
		o := cluster.ReviewOptions{CallID: call.ID, By: "chaos", Verdict: session.VerdictNotHappened, Reason: "not in the effect log"}
		switch c := counts[key]; c {
		case 0:
		case 1:
			o.Verdict, o.Reason, o.Result = session.VerdictHappened, "in the effect log", fmt.Sprintf("effect %d recorded", args.N)
		default:
			e.t.Fatalf("run %s: effect %d happened %d times before its review", r.ID, args.N, c)
		}
		err := e.cl.Review(context.Background(), r.ID, o)
		if errors.Is(err, cluster.ErrNotWaiting) {
			return // settled meanwhile
		}
		if err != nil {
			e.t.Fatalf("review %s %s: %v", r.ID, call.ID, err)
		}
		if prev, ok := reviews[key]; ok && prev == session.VerdictHappened {
			// (Not happened, run again, and its worker killed inside it
			// again, is a second review.)
			e.t.Fatalf("run %s: call %d reviewed again after it happened", r.ID, args.N)
		}
		reviews[key] = o.Verdict
	}
}

// oneResultEach checks that run id's output holds one result for each of
// its calls call_1..call_n.
func (e *env) oneResultEach(id session.ID, n int) {
	e.t.Helper()
	r := e.run(id)
	out, err := e.rt.Store.Load(context.Background(), r.Output)
	if err != nil {
		e.t.Fatal(err)
	}
	results := map[string]int{}
	for _, ch := range out.All() {
		if tr := ch.ToolResult; tr != nil {
			results[tr.CallID]++
		}
	}
	for i := 1; i <= n; i++ {
		if c := results[fmt.Sprintf("call_%d", i)]; c != 1 {
			e.t.Errorf("run %s: call_%d has %d results", id, i, c)
		}
	}
	if len(results) != n {
		e.t.Errorf("run %s: results %v", id, results)
	}
}
