package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// A run submitted from one process is routed by its needs to the only
// pool that offers them, worked by a worker process, and its routing and
// the worker that took it are decision chunks.
func TestSubmitRoutesByNeeds(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("plain")
		e.worker("gpu", "--offers", "gpu=1,region=eu|us")
		id := e.submit(`{"steps":3,"latency_ms":5,"idempotent":true}`, "--needs", "gpu=1,region=us")
		r := e.waitState(id, cluster.StateDone, 30*time.Second)
		if r.Worker != "gpu" {
			t.Fatalf("run went to %s, not gpu", r.Worker)
		}
		e.exactlyOnce(id, 3)
		e.verify(id)
		_, history, err := e.cl.RunStatus(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var route, took *session.Decision
		for _, c := range history {
			switch c.Decision.Selector {
			case "cluster.route":
				route = c.Decision
			case "cluster.worker":
				took = c.Decision
			}
		}
		if route == nil || !strings.Contains(route.Reason, "gpu=1") || len(route.Candidates) != 2 || !strings.Contains(route.Reason, "does not offer gpu=1") {
			t.Fatalf("routing decision: %+v", route)
		}
		if took == nil || took.Choice != "gpu" || !strings.Contains(took.Reason, "starts the run") {
			t.Fatalf("worker decision: %+v", took)
		}
		// rath show of the run shows the routing decision on its input.
		out, _, code := e.rath("show", string(id))
		if code != 0 || !strings.Contains(out, "decision") {
			t.Fatalf("show: %d\n%s", code, out)
		}
	})
}

// A run no live worker can take is unroutable, says why, and is routed
// once a worker that offers its needs starts.
func TestUnroutableUntilAWorkerOffers(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("plain")
		id := e.submit(`{"steps":2,"latency_ms":1,"idempotent":true}`, "--needs", "region=mars")
		r := e.waitState(id, cluster.StateUnroutable, 10*time.Second)
		if !strings.Contains(r.Why, "does not offer region=mars") {
			t.Fatalf("why: %s", r.Why)
		}
		out, _, code := e.rath("status")
		if code != 0 || !strings.Contains(out, "unroutable") || !strings.Contains(out, "region=mars") {
			t.Fatalf("status (%d):\n%s", code, out)
		}
		e.worker("mars", "--offers", "region=mars")
		r = e.waitState(id, cluster.StateDone, 30*time.Second)
		if r.Worker != "mars" {
			t.Fatalf("worked by %s", r.Worker)
		}
	})
}

// An approval gate frees the worker; the verdict from another process
// continues the run; a denial ends it failed.
func TestApproveFromAnotherProcess(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("w1")
		yes := e.submit(`{"steps":4,"latency_ms":1,"idempotent":true,"approval":true}`)
		no := e.submit(`{"steps":4,"latency_ms":1,"idempotent":true,"approval":true}`)
		e.waitState(yes, cluster.StateWaitingApproval, 30*time.Second)
		e.waitState(no, cluster.StateWaitingApproval, 30*time.Second)
		out, _, code := e.rath("pending")
		if code != 0 || !strings.Contains(out, string(yes)) || !strings.Contains(out, "waiting_approval") {
			t.Fatalf("pending (%d):\n%s", code, out)
		}
		// Waiting runs free their worker (its next heartbeat says so).
		e.waitFor("the worker to hold no run", 5*time.Second, func() bool { return e.worker1Runs() == 0 })
		if _, errOut, code := e.rath("approve", string(yes), "--by", "ann", "--reason", "looks right"); code != 0 {
			t.Fatalf("approve: %d %s", code, errOut)
		}
		if _, errOut, code := e.rath("approve", string(no), "--deny", "--by", "bob", "--reason", "not now"); code != 0 {
			t.Fatalf("deny: %d %s", code, errOut)
		}
		r := e.waitState(yes, cluster.StateDone, 30*time.Second)
		e.exactlyOnce(yes, 4)
		e.verify(yes)
		out2, err := e.rt.Store.Load(context.Background(), r.Output)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range out2.All() {
			if a := c.Approval; a != nil && a.Verdict == session.VerdictApproved && a.By == "ann" && a.Reason == "looks right" {
				found = true
			}
		}
		if !found {
			t.Fatal("the output holds no approval chunk by ann")
		}
		d := e.waitState(no, cluster.StateFailed, 30*time.Second)
		if !strings.Contains(d.Error, "rejected") {
			t.Fatalf("denied run's error: %s", d.Error)
		}
		if c := e.effectCounts(); c[string(no)+" 3"] != 0 {
			t.Fatal("a denied run went on past its gate")
		}
		if _, _, code := e.rath("approve", string(yes)); code == 0 {
			t.Fatal("approving a finished run succeeded")
		}
	})
}

func (e *env) worker1Runs() int {
	rep, err := e.cl.Status(context.Background(), cluster.StatusOptions{Limit: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, w := range rep.Workers {
		n += len(w.Runs)
	}
	return n
}

// A run that no worker holds — handed back by a draining worker — is
// cancelled by the cancel itself, which succeeds (it once reported the
// cancellation as its own error).
func TestCancelQueuedRun(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		w := e.worker("w1")
		id := e.submit(`{"steps":400,"latency_ms":30,"idempotent":true}`)
		e.waitFor("some effects", 30*time.Second, func() bool { return len(e.effectCounts()) >= 3 })
		w.signal(syscall.SIGTERM)
		select {
		case err := <-w.done:
			w.done <- err // for the cleanup's kill
		case <-time.After(30 * time.Second):
			t.Fatalf("the worker did not drain\n%s", e.logs())
		}
		e.waitState(id, cluster.StateQueued, 30*time.Second)
		if _, errOut, code := e.rath("cancel", string(id), "--by", "dave", "--reason", "not needed"); code != 0 {
			t.Fatalf("cancel of a queued run: %d %s", code, errOut)
		}
		if r := e.run(id); r.State != cluster.StateCancelled || !strings.Contains(r.Cancel, "dave: not needed") {
			t.Fatalf("after cancel: %+v", r)
		}
	})
}

// Cancel stops a running run on the worker that holds it within a couple
// of heartbeats, with a lifecycle note saying who and why.
func TestCancelReachesTheWorker(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("w1")
		id := e.submit(`{"steps":400,"latency_ms":30,"idempotent":true}`)
		e.waitFor("some effects", 30*time.Second, func() bool { return len(e.effectCounts()) >= 3 })
		start := time.Now()
		if _, errOut, code := e.rath("cancel", string(id), "--by", "carol", "--reason", "wrong input"); code != 0 {
			t.Fatalf("cancel: %d %s\n%s", code, errOut, e.logs())
		}
		took := time.Since(start)
		r := e.run(id)
		if r.State != cluster.StateCancelled || !strings.Contains(r.Cancel, "carol: wrong input") {
			t.Fatalf("after cancel: %+v", r)
		}
		t.Logf("cancel took %s", took)
		n := len(e.effectCounts())
		time.Sleep(500 * time.Millisecond)
		if m := len(e.effectCounts()); m != n {
			t.Fatalf("effects went on after the cancel: %d -> %d", n, m)
		}
		_, history, _ := e.cl.RunStatus(context.Background(), id)
		last := history[len(history)-1]
		if last.Note == nil || !strings.Contains(last.Note.Text, "cancelled by carol: wrong input") {
			t.Fatalf("last ledger entry: %+v", last)
		}
		if _, _, code := e.rath("cancel", string(id)); code == 0 {
			t.Fatal("cancelling a cancelled run succeeded")
		}
	})
}

// A worker killed with SIGKILL mid-run loses nothing: another worker takes
// the run over from its last committed step and no effect is repeated.
func TestTakeoverAfterSIGKILL(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		a := e.worker("a", "--slice-steps", "1000") // the whole run is one slice on a
		id := e.submit(`{"steps":60,"latency_ms":20,"idempotent":true}`)
		e.waitFor("the run on a with effects", 30*time.Second, func() bool {
			return e.run(id).Worker == "a" && len(e.effectCounts()) >= 5
		})
		// a dies before b starts: on a loaded machine a run left going
		// while b starts may well end on a.
		a.kill()
		e.worker("b")
		r := e.waitState(id, cluster.StateDone, 60*time.Second)
		if r.Worker != "b" {
			t.Fatalf("finished by %s", r.Worker)
		}
		e.exactlyOnce(id, 60)
		e.verify(id)
		_, history, _ := e.cl.RunStatus(context.Background(), id)
		found := false
		for _, c := range history {
			if d := c.Decision; d != nil && d.Choice == "b" && strings.Contains(d.Reason, "takes the run over from a") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no takeover decision in %v", history)
		}
		if out, _, code := e.rath("show", string(id)); code != 0 || !strings.Contains(out, "takes the run over from a") || !strings.Contains(out, "cluster run: done") {
			t.Fatalf("rath show of the run (%d):\n%s", code, out)
		}
		rep, _ := e.cl.Status(context.Background(), cluster.StatusOptions{})
		for _, w := range rep.Workers {
			if w.ID == "a" && (w.Alive || !strings.Contains(w.Why, "process is gone")) {
				t.Fatalf("worker a: %+v", w)
			}
		}
	})
}

// SIGTERM drains a worker: it hands its runs back and exits 0; another
// worker finishes them.
func TestDrainOnSIGTERM(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		a := e.worker("a")
		id := e.submit(`{"steps":40,"latency_ms":20,"idempotent":true}`)
		e.waitFor("effects", 30*time.Second, func() bool { return len(e.effectCounts()) >= 3 })
		e.worker("b")
		a.signal(syscall.SIGTERM)
		select {
		case err := <-a.done:
			a.done <- err
			if err != nil {
				t.Fatalf("worker a exited with %v\n%s", err, a.out.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("worker a did not drain")
		}
		e.waitState(id, cluster.StateDone, 60*time.Second)
		e.exactlyOnce(id, 40)
	})
}

// Bad input gets one clear error and a usage exit code.
func TestBadInput(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			what string
			args []string
			code int
			says string
		}{
			{"unknown workflow", []string{"submit", "nope"}, 2, "unknown workflow"},
			{"missing input file", []string{"submit", "cluster", "--input", "@/no/such/file"}, 2, "no such file"},
			{"malformed input", []string{"submit", "cluster", "--input", "{not json"}, 1, "not a JSON config"},
			{"input to a workflow without", []string{"submit", "hello", "--input", "x"}, 2, "takes no input"},
			{"malformed needs", []string{"submit", "cluster", "--needs", "gpu"}, 2, "key=value"},
			{"two review verdicts", []string{"review", "ses_01M8836F80XRAF4GCN10KSQ10W", "--happened", "--abort"}, 2, "exactly one"},
			{"a run id that is not one", []string{"cancel", "nope"}, 2, "not a session id"},
		} {
			if _, errOut, code := e.rath(tc.args...); code != tc.code || !strings.Contains(errOut, tc.says) {
				t.Errorf("%s: exit %d, %q (want %d, %q)", tc.what, code, errOut, tc.code, tc.says)
			}
		}
	})
}

// The worker answers /health/live and /health/ready.
func TestWorkerHealth(t *testing.T) {
	home := t.TempDir()
	e := newEnv(t, home, "sqlite://"+home+"/rath.db")
	p := e.worker("w")
	line := regexp.MustCompile(`health on (http://\S+)/health/ready`)
	// Alive (registered) a moment before it prints where its health is.
	e.waitFor("the worker's health address", 20*time.Second, func() bool { return line.MatchString(p.out.String()) })
	m := line.FindStringSubmatch(p.out.String())
	if m == nil {
		t.Fatalf("no health address in %q", p.out.String())
	}
	get := func(path string) (int, map[string]string) {
		resp, err := http.Get(m[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if code, body := get("/health/live"); code != 200 {
		t.Fatalf("/health/live: %d %v", code, body)
	}
	// Ready once the worker works: its start line comes a moment before.
	var code int
	var body map[string]string
	e.waitFor("the worker ready", 20*time.Second, func() bool {
		code, body = get("/health/ready")
		return code == 200
	})
	if body["status"] != "ready" {
		t.Fatalf("/health/ready: %d %v", code, body)
	}

	// Its /metrics count what its runs commit: three model calls and
	// three tool results for a three-step run.
	id := e.submit(`{"steps":3,"latency_ms":1,"idempotent":true}`)
	e.waitState(id, cluster.StateDone, 30*time.Second)
	resp, err := http.Get(m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scraped, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"rath_tool_results_total 3", "rath_model_call_seconds_count{model=", "rath_step_seconds_count ", "rath_model_tokens_total{kind=\"input\"", "go_goroutines "} {
		if !strings.Contains(string(scraped), want) {
			t.Fatalf("the worker's /metrics has no %q:\n%s", want, scraped)
		}
	}
}

// An agent's tool calls that need approval pause the run and free the
// worker; each verdict from another process continues it. A call to a tool
// that is not idempotent runs once approved (marked as begun first), not
// taken for one interrupted.
func TestApproveToolCalls(t *testing.T) {
	for _, idem := range []bool{true, false} {
		t.Run(fmt.Sprintf("idempotent=%v", idem), func(t *testing.T) { testApproveToolCalls(t, idem) })
	}
}

func testApproveToolCalls(t *testing.T, idem bool) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("w1")
		id := e.submit(fmt.Sprintf(`{"steps":2,"latency_ms":1,"idempotent":%v,"tool_approval":true}`, idem))
		for step := 1; step <= 2; step++ {
			e.waitState(id, cluster.StateWaitingApproval, 30*time.Second)
			if c := e.effectCounts(); c[fmt.Sprintf("%s %d", id, step)] != 0 {
				t.Fatalf("effect %d before its approval", step)
			}
			verdict := []string{"approve", string(id), "--by", "erin"}
			if step == 2 {
				verdict = append(verdict, "--deny", "--reason", "enough")
			}
			if _, errOut, code := e.rath(verdict...); code != 0 {
				t.Fatalf("approve step %d: %d %s", step, code, errOut)
			}
			e.waitFor("the verdict taken", 30*time.Second, func() bool {
				r := e.run(id)
				return r.State != cluster.StateQueued && (r.State != cluster.StateWaitingApproval || r.Slices > step)
			})
		}
		r := e.waitState(id, cluster.StateDone, 30*time.Second)
		c := e.effectCounts()
		if c[string(id)+" 1"] != 1 || c[string(id)+" 2"] != 0 {
			t.Fatalf("effects: %v", c)
		}
		out, err := e.rt.Store.Load(context.Background(), r.Output)
		if err != nil {
			t.Fatal(err)
		}
		var verdicts []string
		for _, ch := range out.All() {
			if a := ch.Approval; a != nil && a.CallID != "" {
				verdicts = append(verdicts, a.Verdict+" by "+a.By)
			}
		}
		want := "requested by ,approved by erin,requested by ,rejected by erin"
		if !idem {
			want = "requested by ,approved by erin,started by ,requested by ,rejected by erin"
		}
		if got := strings.Join(verdicts, ","); got != want {
			t.Fatalf("verdicts: %s, want %s", got, want)
		}
		e.verify(id)
	})
}

// A rolling upgrade neither strands a run nor lets another build
// re-interpret it: a run started on one build waits, saying for which
// revision, while only workers of another build live, and continues when
// a worker of its own build is back.
func TestRevisionsPinRuns(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		old := e.worker("old")
		id := e.submit(`{"steps":2,"latency_ms":1,"idempotent":true,"approval":true}`)
		started := e.waitState(id, cluster.StateWaitingApproval, 30*time.Second)
		old.kill()
		// A new build: the same program with other bytes, so another digest.
		newBin := filepath.Join(t.TempDir(), "rath-new")
		b, err := os.ReadFile(rathBin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(newBin, append(b, []byte("\nnew build\n")...), 0o755); err != nil {
			t.Fatal(err)
		}
		e.workerFrom(newBin, "new")
		if _, errOut, code := e.rath("approve", string(id)); code != 0 {
			t.Fatalf("approve: %d %s", code, errOut)
		}
		r := e.waitState(id, cluster.StateUnroutable, 20*time.Second)
		if !strings.Contains(r.Why, "does not serve revision "+started.Revision) {
			t.Fatalf("why: %s", r.Why)
		}
		time.Sleep(1500 * time.Millisecond) // the new build's reroutes must leave it
		if got := e.run(id); got.State != cluster.StateUnroutable || got.Worker == "new" {
			t.Fatalf("the new build took the run: %+v", got)
		}
		e.worker("old-again")
		r = e.waitState(id, cluster.StateDone, 30*time.Second)
		if r.Worker != "old-again" || r.Revision != started.Revision {
			t.Fatalf("finished by %s on %s", r.Worker, r.Revision)
		}
		e.exactlyOnce(id, 2)
	})
}

// Runs submitted together are each routed, committed and enqueued as one
// submitted alone is (on PostgreSQL in one transaction for those routed):
// their ids come back in order, every routed one is done with its effects
// once, and one no worker admits waits unroutable.
func TestSubmitMany(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("w1")
		const n = 40
		in := `{"steps":2,"latency_ms":1,"idempotent":true}`
		opts := make([]cluster.SubmitOptions, n)
		for i := range opts {
			opts[i].Input = &in
		}
		opts[7].Needs = map[string]string{"region": "mars"}
		ids, err := e.cl.SubmitMany(context.Background(), "cluster", opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != n {
			t.Fatalf("%d ids for %d runs", len(ids), n)
		}
		seen := map[session.ID]bool{}
		for i, id := range ids {
			if seen[id] {
				t.Fatalf("run %d has the id of an earlier one: %s", i, id)
			}
			seen[id] = true
			if i == 7 {
				continue
			}
			if r := e.waitState(id, cluster.StateDone, 60*time.Second); r.Worker != "w1" {
				t.Fatalf("run %d worked by %q", i, r.Worker)
			}
			e.exactlyOnce(id, 2)
		}
		if r := e.waitState(ids[7], cluster.StateUnroutable, 10*time.Second); !strings.Contains(r.Why, "region=mars") || len(r.Needs) != 1 {
			t.Fatalf("the run no worker admits: %+v", r)
		}
		bad := []cluster.SubmitOptions{{Input: &in}, {Needs: map[string]string{"a": "b"}}}
		if _, err := e.cl.SubmitMany(context.Background(), "no-such-workflow", bad); err == nil {
			t.Fatal("submitting runs of an unknown workflow succeeded")
		}
	})
}

// Status counts each pool's queued and running runs.
func TestStatusCountsQueueDepths(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		e.worker("one", "--concurrency", "1")
		in := `{"steps":3,"latency_ms":300,"idempotent":true}`
		opts := make([]cluster.SubmitOptions, 5)
		for i := range opts {
			opts[i].Input = &in
		}
		if _, err := e.cl.SubmitMany(context.Background(), "cluster", opts); err != nil {
			t.Fatal(err)
		}
		e.waitFor("one running and four queued in the worker's pool", 20*time.Second, func() bool {
			rep, err := e.cl.Status(context.Background(), cluster.StatusOptions{Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range rep.Pools {
				if len(p.Workers) == 1 && p.Workers[0] == "one" && p.Running == 1 && p.Queued == 4 {
					return true
				}
			}
			return false
		})
	})
}
