package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/internal/syncbuf"
	"github.com/openrath/rath/session"

	_ "github.com/openrath/rath/examples/14_cluster" // the "cluster" workflow, also in the binary
)

// rathBin is the rath binary the tests start workers from, built once.
var rathBin string

func TestMain(m *testing.M) {
	if slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		os.Exit(m.Run()) // a fuzzer's worker runs one fuzz target: no processes to start
	}
	dir, err := os.MkdirTemp("", "rath-cluster-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rathBin = filepath.Join(dir, "rath")
	build := exec.Command("go", "build", "-o", rathBin, "github.com/openrath/rath/cmd/rath")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster tests: build rath:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// backends are the stores every multi-process test runs on.
func backends(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) {
		home := t.TempDir()
		fn(t, newEnv(t, home, "sqlite://"+filepath.Join(home, "rath.db")))
	})
	t.Run("postgres", func(t *testing.T) {
		home := t.TempDir()
		fn(t, newEnv(t, home, freshDB(t)))
	})
}

func freshDB(t testing.TB) string { return pgtest.FreshDB(t, "rath_cluster") }

// env is one cluster under test: a home, a store, worker processes, and
// an in-test handle for looking at it.
type env struct {
	t       testing.TB
	home    string
	store   string
	effects string
	rt      *rath.Runtime
	cl      *cluster.Cluster

	mu      sync.Mutex
	workers map[string]*proc
	// past holds the output of workers a later one of the same id
	// replaced (logs shows them first).
	past []string
}

// Fast settings, so that deaths are noticed in about a second.
var fast = []string{"--heartbeat", "200ms", "--dead-after", "3s", "--poll", "50ms"}

func newEnv(t testing.TB, home, storeURL string) *env {
	return newEnvWith(t, home, storeURL, cluster.Options{Heartbeat: 200 * time.Millisecond, DeadAfter: 3 * time.Second})
}

// newEnvWith is newEnv whose own handle on the cluster (routing, status)
// uses opts.
func newEnvWith(t testing.TB, home, storeURL string, opts cluster.Options) *env {
	e := &env{t: t, home: home, store: storeURL, effects: filepath.Join(home, "effects.log"), workers: map[string]*proc{}}
	ctx := context.Background()
	rt, err := rath.Open(ctx, rath.Config{Home: home, Store: storeURL})
	if err != nil {
		t.Fatal(err)
	}
	e.rt = rt
	cl, err := cluster.Open(ctx, rt, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.cl = cl
	t.Cleanup(func() {
		e.mu.Lock()
		for _, p := range e.workers {
			p.kill()
		}
		e.mu.Unlock()
		cl.Close()
		rt.Close()
	})
	return e
}

// proc is a started rath process.
type proc struct {
	id   string
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan error
}

type lockedBuffer = syncbuf.Buffer

func (e *env) command(args ...string) *exec.Cmd { return e.commandFrom(rathBin, args...) }

func (e *env) commandFrom(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"--home", e.home, "--store", e.store}, args...)...)
	cmd.Env = append(os.Environ(), "RATH_EFFECT_LOG="+e.effects, "RATH_HOME="+e.home)
	return cmd
}

// worker starts a worker process and waits until the cluster sees it
// alive.
func (e *env) worker(id string, args ...string) *proc {
	e.t.Helper()
	return e.workerFrom(rathBin, id, args...)
}

// workerFrom starts a worker from the binary bin.
func (e *env) workerFrom(bin, id string, args ...string) *proc {
	e.t.Helper()
	p := e.start(bin, id, append(append([]string{"worker", "--id", id}, fast...), args...)...)
	cmd := p.cmd
	e.waitFor(fmt.Sprintf("worker %s alive", id), 20*time.Second, func() bool {
		rep, err := e.cl.Status(context.Background(), cluster.StatusOptions{Limit: 1})
		if err != nil {
			return false
		}
		for _, w := range rep.Workers {
			if w.ID == id && w.Alive && w.PID == cmd.Process.Pid {
				return true
			}
		}
		return false
	})
	return p
}

// maxPast is how many replaced workers' outputs logs shows, the last.
const maxPast = 40

// start starts a rath process from bin, kept as e's worker id.
func (e *env) start(bin, id string, args ...string) *proc {
	e.t.Helper()
	cmd := e.commandFrom(bin, args...)
	p := &proc{id: id, cmd: cmd, out: &lockedBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	e.mu.Lock()
	if old := e.workers[id]; old != nil {
		e.past = append(e.past, fmt.Sprintf("--- worker %s (pid %d, replaced) ---\n%s\n", id, old.cmd.Process.Pid, old.out.String()))
		if len(e.past) > maxPast {
			e.past = e.past[len(e.past)-maxPast:]
		}
	}
	e.workers[id] = p
	e.mu.Unlock()
	return p
}

func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.done <- nil
}

func (p *proc) signal(s syscall.Signal) { _ = p.cmd.Process.Signal(s) }

// rath runs the CLI to its end.
func (e *env) rath(args ...string) (stdout, stderr string, code int) {
	cmd := e.command(args...)
	var o, er bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &er
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return o.String(), er.String(), code
}

// submit submits a run of the cluster example with input through the CLI.
func (e *env) submit(input string, extra ...string) session.ID {
	e.t.Helper()
	out, errOut, code := e.rath(append([]string{"submit", "cluster", "--input", input}, extra...)...)
	if code != 0 {
		e.t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	return session.ID(strings.TrimSpace(out))
}

func (e *env) run(id session.ID) *cluster.Run {
	e.t.Helper()
	r, _, err := e.cl.RunStatus(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// waitState waits for the run to reach state.
func (e *env) waitState(id session.ID, state cluster.State, within time.Duration) *cluster.Run {
	e.t.Helper()
	var r *cluster.Run
	deadline := time.Now().Add(within)
	for {
		r = e.run(id)
		if r.State == state {
			return r
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(r, "", "  ")
			e.t.Fatalf("timed out after %s waiting for run %s to be %s; it is:\n%s\n%s", within, id, state, b, e.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) waitFor(what string, within time.Duration, ok func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %s waiting for %s\n%s", within, what, e.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logs is every worker's output, for failure messages.
func (e *env) logs() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var sb strings.Builder
	for _, p := range e.past {
		sb.WriteString(p)
	}
	for id, p := range e.workers {
		fmt.Fprintf(&sb, "--- worker %s ---\n%s\n", id, p.out.String())
	}
	return sb.String()
}

// effects counts the effect log's lines by "<run> <n>".
func (e *env) effectCounts() map[string]int {
	e.t.Helper()
	f, err := os.Open(e.effects)
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
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 {
			counts[fields[1]+" "+fields[2]]++
		}
	}
	return counts
}

// exactlyOnce checks that run's effects 1..n each appear once.
func (e *env) exactlyOnce(id session.ID, n int) {
	e.t.Helper()
	counts := e.effectCounts()
	for i := 1; i <= n; i++ {
		if c := counts[fmt.Sprintf("%s %d", id, i)]; c != 1 {
			e.t.Errorf("run %s effect %d appears %d times", id, i, c)
		}
	}
}

// verify checks the run's output chain and the stored chains of every
// session the run wrote.
func (e *env) verify(id session.ID) {
	e.t.Helper()
	r := e.run(id)
	ctx := context.Background()
	for _, sid := range []session.ID{id, r.Output, r.Ledger} {
		if sid == "" {
			continue
		}
		if err := e.rt.Store.Verify(ctx, sid); err != nil {
			e.t.Errorf("verify %s: %v", sid, err)
		}
	}
}
