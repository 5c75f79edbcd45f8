package cluster_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Chaos: three workers, 300 runs of tool calls with effects; a random
// worker is killed with SIGKILL every couple of seconds and started again.
// At the end every run is done, every chain verifies, every logical call's
// effect appears exactly once, and no run was worked by two workers at
// once (the tool's executions of a run come from one process after
// another, never interleaved).
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos takes a minute; not in -short")
	}
	backends(t, func(t *testing.T, e *env) {
		attempts := filepath.Join(e.home, "attempts.log")
		os.Setenv("RATH_ATTEMPT_LOG", attempts)
		defer os.Unsetenv("RATH_ATTEMPT_LOG")
		const runs, steps = 300, 8
		names := []string{"w0", "w1", "w2"}
		procs := map[string]*proc{}
		for _, n := range names {
			procs[n] = e.worker(n, "--concurrency", "8", "--slice-steps", "3")
		}
		ids := make([]session.ID, 0, runs)
		for range runs / 50 {
			// 50 at a time through the Go API (a CLI process per run would
			// measure process starts, not the cluster). Each model call
			// takes 300 ms, so that the work outlasts several kills even
			// when restarting a worker is slow (a loaded machine, -race).
			for range 50 {
				text := fmt.Sprintf(`{"steps":%d,"latency_ms":300,"idempotent":true}`, steps)
				id, err := e.cl.Submit(context.Background(), "cluster", cluster.SubmitOptions{Input: &text})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		kills := 0
		deadline := time.Now().Add(4 * time.Minute)
		for {
			// One count, not a read per run: on a loaded machine 300 reads
			// took most of a minute, and the kills came that far apart.
			done, err := e.rt.Store.Count(context.Background(), store.Filter{Labels: map[string]string{cluster.LabelKind: "run", cluster.LabelState: string(cluster.StateDone)}})
			if err != nil {
				t.Fatal(err)
			}
			if done == runs {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d runs done after %d kills\n%s", done, runs, kills, e.logs())
			}
			time.Sleep(time.Duration(1000+rng.IntN(1500)) * time.Millisecond)
			n := names[rng.IntN(len(names))]
			procs[n].kill()
			kills++
			procs[n] = e.worker(n, "--concurrency", "8", "--slice-steps", "3")
		}
		t.Logf("%d runs done with %d kills", runs, kills)
		if kills < 5 {
			t.Fatalf("only %d kills: the test proved little", kills)
		}
		for _, id := range ids {
			e.exactlyOnce(id, steps)
			e.verify(id)
		}
		checkNoOverlap(t, attempts)
	})
}

// checkNoOverlap reads the attempt log ("<run> <n> <pid> <start> <end>",
// one line per finished execution of the tool) and fails if two
// executions of one run by different processes overlap in time.
func checkNoOverlap(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		pid        string
		start, end int64
	}
	byRun := map[string][]span{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var run, pid string
		var n int
		var sp span
		if _, err := fmt.Sscan(line, &run, &n, &pid, &sp.start, &sp.end); err != nil {
			t.Fatalf("attempt line %q: %v", line, err)
		}
		sp.pid = pid
		byRun[run] = append(byRun[run], sp)
	}
	for run, spans := range byRun {
		slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
		for i := 1; i < len(spans); i++ {
			if p := spans[i-1]; spans[i].start < p.end && spans[i].pid != p.pid {
				t.Fatalf("run %s was worked by processes %s and %s at once", run, p.pid, spans[i].pid)
			}
		}
	}
	if len(byRun) == 0 {
		t.Fatal("no attempts logged")
	}
}
