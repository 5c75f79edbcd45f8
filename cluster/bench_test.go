package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// benchRuns is how many runs the fan-out benchmarks submit
// (RATH_CLUSTER_RUNS; default 10,000).
func benchRuns(def int) int {
	if n, err := strconv.Atoi(os.Getenv("RATH_CLUSTER_RUNS")); err == nil && n > 0 {
		return n
	}
	return def
}

// benchInput is BenchmarkFanout's shape: 5 steps, 20 ms, a tool that is
// not idempotent (so each step commits before its tool runs). Its effects
// are appended to the log without the idempotent dedupe (which scans it).
const benchInput = `{"steps":5,"latency_ms":20,"idempotent":false}`

// inProcess runs n runs of the cluster workflow in this process, all at
// once, durably on st's store, and returns the wall time.
func inProcess(b *testing.B, e *env, n int) time.Duration {
	text := benchInput
	ctx := rath.WithInput(context.Background(), text)
	w, err := rath.LookupWorkflow("cluster")
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range n {
		wg.Go(func() {
			m, in, err := w.Build(ctx, e.rt)
			if err == nil {
				_, err = flow.Run(ctx, e.rt.Store, m, in)
			}
			if err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		b.Fatalf("%d in-process runs failed", failed.Load())
	}
	return time.Since(t0)
}

// submitAll submits n runs with SubmitMany (as a program fanning out
// runs would) and returns their ids.
func submitAll(b *testing.B, e *env, n int) []session.ID {
	text := benchInput
	opts := make([]cluster.SubmitOptions, n)
	for i := range opts {
		opts[i].Input = &text
	}
	ids, err := e.cl.SubmitMany(context.Background(), "cluster", opts)
	if err != nil {
		b.Fatal(err)
	}
	return ids
}

// waitDone waits until every run is done. On PostgreSQL it counts them in
// the database (a poll that reads every run's record, as Status does,
// would load the database it measures).
func waitDone(b *testing.B, e *env, n int, within time.Duration) {
	ctx := context.Background()
	count := func() int {
		rep, err := e.cl.Status(ctx, cluster.StatusOptions{States: []cluster.State{cluster.StateDone}})
		if err != nil {
			b.Fatal(err)
		}
		return len(rep.Runs)
	}
	if strings.HasPrefix(e.store, "postgres") {
		conn, err := pgx.Connect(ctx, e.store)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		count = func() (done int) {
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM rath.labels WHERE key = $1 AND value = $2`,
				cluster.LabelState, string(cluster.StateDone)).Scan(&done); err != nil {
				b.Fatal(err)
			}
			return done
		}
	}
	deadline := time.Now().Add(within)
	start, shown := time.Now(), time.Now()
	for {
		done := count()
		if done >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d runs done after %s\n%s", done, n, within, e.logs())
		}
		if testing.Verbose() && time.Since(shown) >= 5*time.Second {
			shown = time.Now()
			fmt.Fprintf(os.Stderr, "%s: %d of %d runs done; %s\n", time.Since(start).Round(time.Second), done, n, states(ctx, e))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// states counts the runs by state, for progress lines.
func states(ctx context.Context, e *env) string {
	counts := map[cluster.State]int{}
	for _, st := range []cluster.State{cluster.StateQueued, cluster.StateUnroutable, cluster.StateRunning} {
		n, err := e.rt.Store.Count(ctx, store.Filter{Labels: map[string]string{cluster.LabelState: string(st)}})
		if err != nil {
			return err.Error()
		}
		counts[st] = n
	}
	return fmt.Sprint(counts)
}

// queueToStart returns each run's time from submit (its routing decision)
// to its first slice (the worker's decision after it, both on the input),
// in ms.
func queueToStart(b *testing.B, e *env, ids []session.ID) []float64 {
	ctx := context.Background()
	var out []float64
	for _, id := range ids {
		in, err := e.rt.Store.Tail(ctx, id, 2)
		if err != nil {
			b.Fatal(err)
		}
		if len(in) == 2 && in[0].Decision != nil && in[1].Decision != nil && in[1].Decision.Selector == "cluster.worker" {
			out = append(out, float64(in[1].Time.Sub(in[0].Time).Microseconds())/1000)
		}
	}
	slices.Sort(out)
	return out
}

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(len(xs)-1, int(float64(len(xs))*p))]
}

// BenchmarkClusterFanout: 10,000 runs × 5 steps at 20 ms model latency
// through the cluster on PostgreSQL with 2 worker processes, against the
// same runs in one process on the same store.
func BenchmarkClusterFanout(b *testing.B) {
	n := benchRuns(10000)
	for b.Loop() {
		home := b.TempDir()
		e := newEnvWith(b, home, freshDB(b), cluster.Options{})
		base := inProcess(b, e, n)
		e.defaultWorker("w1", "--concurrency", "2000")
		e.defaultWorker("w2", "--concurrency", "2000")
		t0 := time.Now()
		ids := submitAll(b, e, n)
		submitted := time.Since(t0)
		waitDone(b, e, n, 30*time.Minute)
		wall := time.Since(t0)
		q := queueToStart(b, e, ids)
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(base.Seconds(), "inprocess-s")
		b.ReportMetric(submitted.Seconds(), "submit-s")
		b.ReportMetric(wall.Seconds()/base.Seconds(), "x-inprocess")
		b.ReportMetric(pct(q, 0.5), "q2start-p50-ms")
		b.ReportMetric(pct(q, 0.99), "q2start-p99-ms")
	}
}

// BenchmarkClusterScaling: runs/s with 1, 2 and 4 worker processes (20 ms
// model latency), and the ratio to linear from one. Each worker works 4
// runs at once (RATH_CLUSTER_CONCURRENCY), so that the work waits on the
// model rather than the CPU, as long as the machine has room for four.
func BenchmarkClusterScaling(b *testing.B) {
	n := benchRuns(1000)
	conc := 4
	if c, err := strconv.Atoi(os.Getenv("RATH_CLUSTER_CONCURRENCY")); err == nil && c > 0 {
		conc = c
	}
	var one float64
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				home := b.TempDir()
				e := newEnvWith(b, home, freshDB(b), cluster.Options{})
				for i := range workers {
					e.defaultWorker(fmt.Sprintf("w%d", i), "--concurrency", strconv.Itoa(conc))
				}
				t0 := time.Now()
				submitAll(b, e, n)
				waitDone(b, e, n, 30*time.Minute)
				rate := float64(n) / time.Since(t0).Seconds()
				if workers == 1 {
					one = rate
				}
				b.ReportMetric(rate, "runs/s")
				if one > 0 {
					b.ReportMetric(rate/(one*float64(workers)), "of-linear")
				}
			}
		})
	}
}

// BenchmarkTakeover: seconds from SIGKILL of the worker holding a run to
// the next committed step of that run on another worker, over 20 kills,
// with the default heartbeat and dead-after settings.
func BenchmarkTakeover(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			for b.Loop() {
				home := b.TempDir()
				e := newEnv(b, home, storeURL(b, backend, home))
				attempts := filepath.Join(home, "attempts.log")
				os.Setenv("RATH_ATTEMPT_LOG", attempts)
				var secs []float64
				standby := e.defaultWorker("standby-0")
				for k := range 20 {
					holder := e.defaultWorker(fmt.Sprintf("holder-%d", k))
					// The standby must not take the run first: it is started
					// after the holder took it.
					standby.kill()
					id := e.submit(`{"steps":1000,"latency_ms":20,"idempotent":true}`)
					e.waitFor("the holder working", 30*time.Second, func() bool {
						return e.run(id).Worker == holder.id && len(e.effectCounts()) > 0
					})
					standby = e.defaultWorker(fmt.Sprintf("standby-%d", k+1))
					killed := time.Now()
					holder.kill()
					var took time.Duration
					e.waitFor("a step on the standby", 60*time.Second, func() bool {
						took = firstStepAfter(attempts, string(id), standby.cmd.Process.Pid, killed)
						return took > 0
					})
					secs = append(secs, took.Seconds())
					if _, _, code := e.rath("cancel", string(id)); code != 0 {
						b.Fatalf("cancel %s", id)
					}
				}
				os.Unsetenv("RATH_ATTEMPT_LOG")
				slices.Sort(secs)
				b.ReportMetric(pct(secs, 0.5), "takeover-p50-s")
				b.ReportMetric(pct(secs, 0.99), "takeover-p99-s")
			}
		})
	}
}

// defaultWorker starts a worker with the default heartbeat and dead-after.
func (e *env) defaultWorker(id string, args ...string) *proc {
	e.t.Helper()
	p := e.start(rathBin, id, append([]string{"worker", "--id", id}, args...)...)
	e.waitFor("worker "+id, 20*time.Second, func() bool { return strings.Contains(p.out.String(), "worker started") })
	return p
}

// firstStepAfter is the time from t to the end of the first execution of
// run's tool by process pid that started after t (0 if none yet).
func firstStepAfter(path, run string, pid int, t time.Time) time.Duration {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var r string
		var n, p int
		var start, end int64
		if _, err := fmt.Sscan(line, &r, &n, &p, &start, &end); err != nil || r != run || p != pid {
			continue
		}
		if start >= t.UnixNano() {
			return time.Duration(end - t.UnixNano())
		}
	}
	return 0
}

// BenchmarkSliceOverhead: what scheduling a slice costs — the job's claim
// and completion, the epoch advance, the run's record and the resume's
// reads — on each store: one worker works runs of one step (no model
// latency) one at a time; the cycle from one run's start to the next, less
// the same run's time in process, is the overhead.
//
// The runs of the -effect cases make one tool call: idempotent, or not —
// then the call starts only after the holder check (the worker's lock,
// its own record, the run's epoch) and its start is recorded first, which
// the difference between the two prices.
func BenchmarkSliceOverhead(b *testing.B) {
	const n = 200
	cases := []struct{ name, input string }{
		{"", `{"steps":0,"latency_ms":0,"idempotent":true}`},
		{"-effect-idempotent", `{"steps":1,"latency_ms":0,"idempotent":true}`},
		{"-effect-checked", `{"steps":1,"latency_ms":0,"idempotent":false}`},
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, cs := range cases {
			sliceOverhead(b, backend+cs.name, backend, cs.input, n)
		}
	}
}

func sliceOverhead(b *testing.B, name, backend, input string, n int) {
	b.Run(name, func(b *testing.B) {
		for b.Loop() {
			home := b.TempDir()
			e := newEnv(b, home, storeURL(b, backend, home))
			w, err := rath.LookupWorkflow("cluster")
			if err != nil {
				b.Fatal(err)
			}
			ctx := rath.WithInput(context.Background(), input)
			t0 := time.Now()
			for range n {
				m, in, err := w.Build(ctx, e.rt)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := flow.Run(ctx, e.rt.Store, m, in); err != nil {
					b.Fatal(err)
				}
			}
			inproc := time.Since(t0) / time.Duration(n)
			var ids []session.ID
			for range n {
				text := input
				id, err := e.cl.Submit(context.Background(), "cluster", cluster.SubmitOptions{Input: &text})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, id)
			}
			e.worker("w", "--concurrency", "1")
			waitDone(b, e, n, 10*time.Minute)
			var starts []time.Time
			for _, id := range ids {
				_, history, err := e.cl.RunStatus(context.Background(), id)
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range history {
					if c.Decision != nil && c.Decision.Selector == "cluster.worker" {
						starts = append(starts, c.Time)
						break
					}
				}
			}
			slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
			cycle := starts[len(starts)-1].Sub(starts[0]) / time.Duration(len(starts)-1)
			b.ReportMetric(float64(cycle.Microseconds())/1000, "cycle-ms")
			b.ReportMetric(float64(inproc.Microseconds())/1000, "inprocess-ms")
			b.ReportMetric(float64((cycle-inproc).Microseconds())/1000, "overhead-ms")
		}
	})
}

// storeURL is a new store of the backend for a benchmark.
func storeURL(b *testing.B, backend, home string) string {
	if backend == "postgres" {
		return freshDB(b)
	}
	return "sqlite://" + filepath.Join(home, "rath.db")
}
