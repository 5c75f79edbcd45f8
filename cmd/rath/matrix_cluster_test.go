package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/session"
)

// The cluster's kill matrix: every registered workflow, submitted to a
// cluster of `rath worker` processes, its worker SIGKILLed at a random
// moment while it holds the run and another worker started; the run
// finishes on the other worker (a call the kill cut, whose effect is
// unknown, settled not happened as the local matrix settles it), its
// chains verify, and its output equals an uninterrupted cluster run's
// chunk for chunk, as projected (matrix_project_test.go). The knobs are
// the interrupt matrix's: in CI a seeded share of the workflows on each
// store (clusterShare), one kill each; RATH_MATRIX=long for every
// workflow, five kills each; RATH_MATRIX_SEED, RATH_MATRIX_WORKFLOWS,
// RATH_MATRIX_STORES.
func TestClusterKillMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rath and kills workers of every workflow")
	}
	cfg := matrixConfigFromEnv(t)
	per := 1
	if cfg.long {
		per = 5
	}
	t.Logf("cluster kill matrix: seed %d (RATH_MATRIX_SEED=%d replays it)", cfg.seed, cfg.seed)
	m := &clusterMatrix{cfg: cfg, per: per, bin: rathBinary(t), gocache: hostGoCache(t)}
	began := time.Now()
	var wg sync.WaitGroup
	t.Run("cases", func(t *testing.T) {
		for _, st := range matrixStores {
			if cfg.stores != nil && !cfg.stores[st.name] {
				continue
			}
			wg.Go(func() {
				t.Run(st.name, func(t *testing.T) {
					if st.name == "postgres" {
						pgtest.Server(t)
					}
					for _, w := range m.workflows(st.name) {
						t.Run(w.Name, func(t *testing.T) { m.workflow(t, st, w) })
					}
				})
			})
		}
		wg.Wait()
	})
	f := &m.total
	t.Logf("cluster kill matrix: seed %d, %s: %d kills tried, %d landed before the run was over (%d of them while the killed worker ran it), %d after; "+
		"%d finished on the other worker (%d through a review of a call the kill cut), %d outputs equal to the uninterrupted run's, %d differ",
		cfg.seed, time.Since(began).Round(time.Second), f.tried, f.landed, f.cut, f.ended, f.resumed, f.reviewed, f.equal, f.differ)
}

// clusterShare is how many workflows a CI run of the matrix kills on each
// store, drawn by the seed (a cluster case takes several seconds: worker
// processes start, the run is followed through rath status); long mode,
// or RATH_MATRIX_WORKFLOWS, takes every one named.
const clusterShare = 6

// workflows are the workflows the matrix kills workers of on store st.
func (m *clusterMatrix) workflows(st string) []rath.Workflow {
	var all []rath.Workflow
	for _, w := range rath.Workflows() {
		if m.cfg.workflows == nil || m.cfg.workflows[w.Name] {
			all = append(all, w)
		}
	}
	if m.cfg.long || m.cfg.workflows != nil || len(all) <= clusterShare {
		return all
	}
	rng := m.cfg.rng("cluster-share", st)
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	picked := all[:clusterShare]
	slices.SortFunc(picked, func(a, b rath.Workflow) int { return strings.Compare(a.Name, b.Name) })
	return picked
}

type clusterMatrix struct {
	cfg          matrixConfig
	per          int
	bin, gocache string
	total        figures
}

// clusterVolatile is what differs between two uninterrupted cluster runs
// of a workflow, whatever it is (the workflows' own volatile text applies
// too).
var clusterVolatile = []volatileText{{
	re:   regexp.MustCompile(`pid \d+`),
	repl: "pid N",
	why:  "the cluster's decision that a worker starts the run names the worker's process",
}}

// workflow runs w uninterrupted on a cluster, then kills its worker at
// random moments until m.per kills landed before the run was over.
func (m *clusterMatrix) workflow(t *testing.T, st matrixStore, w rath.Workflow) {
	rng := m.cfg.rng("cluster-"+st.name, w.Name)
	fresh := st.cases(t)
	ref := newClusterCase(t, m, fresh())
	want, took := ref.run(w.Name, -1)
	if t.Failed() {
		return
	}
	landed := 0
	for i := 0; landed < m.per && i < 3*m.per; i++ {
		after := time.Duration(rng.Int64N(int64(max(took, time.Millisecond))))
		c := newClusterCase(t, m, fresh())
		got, _ := c.run(w.Name, after)
		killed := c.killed
		m.total.count(func(f *figures) { f.tried++ })
		if !killed {
			m.total.count(func(f *figures) { f.ended++ })
			continue
		}
		landed++
		m.total.count(func(f *figures) { f.landed++; f.resumed++ })
		if c.reviewed {
			m.total.count(func(f *figures) { f.reviewed++ })
		}
		if c.held {
			m.total.count(func(f *figures) { f.cut++ }) // counted as held, in this matrix
		}
		what := fmt.Sprintf("%s on %s, worker killed %s into the run", w.Name, st.name, after.Round(time.Millisecond))
		if t.Failed() {
			return
		}
		d, _ := compare(want, got)
		if d < 0 {
			m.total.count(func(f *figures) { f.equal++ })
			t.Logf("%s: finished on the other worker, its output equal to the uninterrupted run's", what)
			continue
		}
		m.total.count(func(f *figures) { f.differ++ })
		a, b := around(want.line(d), got.line(d))
		t.Errorf("%s: the output differs from the uninterrupted run's at chunk %d of %d\nwant %s\ngot  %s\nwhere they differ:\nwant %s\ngot  %s",
			what, d, len(got.lines), clipChunk(want.line(d)), clipChunk(got.line(d)), a, b)
	}
	if landed == 0 {
		t.Logf("%s on %s: no kill landed before the run was over (it took %s from its submit)", w.Name, st.name, took)
	}
}

// clusterCase is one cluster of workers on a store of its own.
type clusterCase struct {
	*built
	m        *clusterMatrix
	mu       sync.Mutex
	workers  map[string]*exec.Cmd
	logs     map[string]*lockedLog
	done     map[string]chan struct{} // closed when the worker's process is reaped
	run1     session.ID
	killed   bool // the kill came before the run was over
	held     bool // and a was running it
	reviewed bool
}

func newClusterCase(t *testing.T, m *clusterMatrix, storeURL string) *clusterCase {
	return &clusterCase{built: newCase(t, m.bin, storeURL, m.gocache), m: m, workers: map[string]*exec.Cmd{}, logs: map[string]*lockedLog{}, done: map[string]chan struct{}{}}
}

// lockedLog is a worker's stderr, for failures.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// worker starts `rath worker` named id: short slices, so that a run moves
// between slices too, and quick to be taken for dead.
func (c *clusterCase) worker(id string) {
	c.t.Helper()
	cmd := c.command("worker", "--id", id, "--concurrency", "2", "--slice-steps", "3", "--heartbeat", "100ms",
		"--dead-after", "1s", "--poll", "20ms", "--health", "127.0.0.1:0")
	log := &lockedLog{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = 5 * time.Second // a process it started may hold its output open
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c.mu.Lock()
	c.workers[id], c.logs[id], c.done[id] = cmd, log, done
	c.mu.Unlock()
	c.t.Cleanup(func() { stopWorker(cmd, done) })
}

// stopWorker stops a worker's process (SIGTERM: it drains), killing it
// past 20 seconds, and waits for it.
func stopWorker(cmd *exec.Cmd, done chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// stop stops the case's workers: the next case on the same PostgreSQL
// database must not meet them.
func (c *clusterCase) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, cmd := range c.workers {
		stopWorker(cmd, c.done[id])
	}
}

// ready waits until worker id says it started.
func (c *clusterCase) ready(id string) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c.mu.Lock()
		l := c.logs[id]
		c.mu.Unlock()
		if strings.Contains(l.String(), "worker started") {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("worker %s did not start in a minute:\n%s", id, l.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// status is the run's record.
func (c *clusterCase) status(id session.ID) cluster.Run {
	c.t.Helper()
	var v struct {
		Run cluster.Run `json:"run"`
	}
	if err := json.Unmarshal([]byte(c.ok("--json", "status", string(id))), &v); err != nil {
		c.t.Fatal(err)
	}
	return v.Run
}

// kill SIGKILLs worker a, which the run was submitted to, and starts
// worker b; it reports whether the run was not over then (and so whether
// the kill landed while a held it, or was to take it up again).
func (c *clusterCase) kill() bool {
	c.mu.Lock()
	a := c.workers["a"]
	c.mu.Unlock()
	_ = a.Process.Kill()
	<-c.done["a"] // reaped: gone, not a zombie
	r := c.status(c.run1)
	c.worker("b")
	c.held = r.State == cluster.StateRunning && r.Holder != nil && r.Holder.Worker == "a"
	return !r.State.Final()
}

var submitted = regexp.MustCompile(`ses_[0-9A-HJKMNP-TV-Z]{26}`)

// run submits wf to worker a and, if killAt is not negative, SIGKILLs it
// that long after the submit and starts worker b (kill). The run must
// then finish: run returns the projection of its output and how long it
// took from its submit.
func (c *clusterCase) run(wf string, killAt time.Duration) (projection, time.Duration) {
	c.t.Helper()
	c.worker("a")
	c.ready("a")
	began := time.Now()
	out := c.ok("submit", wf)
	id := session.ID(submitted.FindString(out))
	if id == "" {
		c.t.Fatalf("rath submit %s printed no run id: %q", wf, out)
	}
	c.run1 = id
	if killAt >= 0 {
		time.Sleep(time.Until(began.Add(killAt)))
		c.killed = c.kill()
	}
	deadline := time.Now().Add(3 * time.Minute)
	var r cluster.Run
	for {
		r = c.status(id)
		if r.State == cluster.StateNeedsReview {
			// A call to a tool that is not idempotent, cut by the kill.
			c.reviewed = true
			_, errOut, code := c.built.run("review", string(id), "--not-happened", "--reason", "the cluster kill matrix")
			if code != 0 && strings.Contains(errOut, "previous holder may still exist") {
				// The killed worker's process is still being torn down:
				// a person waits until it is gone, as the error says.
				c.t.Logf("run %s: the review waits: %s", id, strings.TrimSpace(errOut))
				time.Sleep(200 * time.Millisecond)
			} else if code != 0 {
				c.t.Fatalf("rath review %s: exit %d\n%s", id, code, errOut)
			}
			continue
		}
		if r.State.Final() || r.State == cluster.StateWaitingApproval {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run %s (%s) is still %s after 3 minutes: %+v\n%s", id, wf, r.State, r, c.workerLogs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(began)
	c.stop()
	if r.State != cluster.StateDone {
		c.t.Fatalf("run %s (%s) ended %s: %s\n%s", id, wf, r.State, r.Error, c.workerLogs())
	}
	c.ok("verify")
	_, chunks := c.show(r.Output)
	kept, reviewed := withoutReviews(withoutPlacement(chunks))
	vol := append(append([]volatileText{}, volatile[wf]...), clusterVolatile...)
	p := project(kept, c.home, vol, firstAttempts(c.ls()))
	p.reviewed = reviewed
	return p, took
}

// withoutPlacement is chunks without the cluster's own decisions (routing
// and which worker starts the run, on its input): they record where the
// run went, which a kill changes by design; the ledger holds the rest.
func withoutPlacement(chunks []session.Chunk) []session.Chunk {
	out := chunks[:0:0]
	for _, c := range chunks {
		if d := c.Decision; d != nil && strings.HasPrefix(d.Selector, "cluster.") {
			continue
		}
		out = append(out, c)
	}
	return out
}

func (c *clusterCase) workerLogs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for id, l := range c.logs {
		fmt.Fprintf(&b, "--- worker %s ---\n%s\n", id, l.String())
	}
	return b.String()
}
