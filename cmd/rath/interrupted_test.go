package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// The runs these tests kill are of the "cluster" example workflow (in
// every rath binary): a scripted model without latency has an agent call
// record_effect once per step; the tool, not idempotent here, appends
// "<idempotency key> <run> <n>" to the effect log, then sleeps. The log is
// the evidence of what ran: a call whose line appears twice ran twice.

const steps = 6

// sleepMS is how long each call sleeps in the runs killed at random: long
// enough for most kills to fall inside a run rather than in its start.
const sleepMS = 40

// TestInterruptedRuns builds the rath binary and kills `rath run` with
// SIGKILL: once inside a tool call, to check what a live run and a dead
// one look like, then at random moments.
func TestInterruptedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rath and starts processes")
	}
	bin := rathBinary(t)
	t.Run("KilledInsideATool", func(t *testing.T) {
		t.Run("sqlite", func(t *testing.T) { killedInsideATool(t, newCLI(t, bin, "")) })
		t.Run("postgres", func(t *testing.T) { killedInsideATool(t, newCLI(t, bin, pgtest.FreshDB(t, "rath_cli_resume"))) })
	})
	t.Run("KilledAtRandom", func(t *testing.T) { killedAtRandom(t, newCLI(t, bin, "")) })
}

// built runs the built rath on one home and store (the home's own if
// storeURL is empty).
type built struct {
	t                   *testing.T
	bin, home, storeURL string
	// env is added to the environment rath runs in, after the rest.
	env []string
}

func newCLI(t *testing.T, bin, storeURL string) *built {
	return &built{t: t, bin: bin, home: filepath.Join(t.TempDir(), "home"), storeURL: storeURL}
}

func (c *built) command(args ...string) *exec.Cmd {
	if c.storeURL != "" {
		args = append([]string{"--store", c.storeURL}, args...)
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(os.Environ(), "RATH_HOME="+c.home, "RATH_EFFECT_LOG="+filepath.Join(c.home, "effects.log"), "RATH_ATTEMPT_LOG=", "RATH_MEMORY=")
	cmd.Env = append(cmd.Env, c.env...)
	return cmd
}

// run runs rath to its end and returns its stdout, stderr and exit code.
func (c *built) run(args ...string) (string, string, int) {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// ok runs rath, which must exit 0, and returns its stdout.
func (c *built) ok(args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("rath %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// fails runs rath, which must exit code with stderr containing want.
func (c *built) fails(code int, want string, args ...string) {
	c.t.Helper()
	_, errs, got := c.run(args...)
	if got != code || !strings.Contains(errs, want) || strings.Contains(errs, "goroutine") {
		c.t.Fatalf("rath %s: exit %d, want %d with %q\n%s", strings.Join(args, " "), got, code, want, errs)
	}
}

// ls is `rath ls --all --json` by id: every session, runs and theirs
// (the statuses as a person reads them).
func (c *built) ls(args ...string) map[session.ID]store.Info {
	c.t.Helper()
	var infos []store.Info
	if err := json.Unmarshal([]byte(c.ok(append([]string{"ls", "--all", "--json"}, args...)...)), &infos); err != nil {
		c.t.Fatal(err)
	}
	out := map[session.ID]store.Info{}
	for _, i := range infos {
		out[i.ID] = i
	}
	return out
}

// show is `rath show --json ID`.
func (c *built) show(id session.ID) (store.Info, []session.Chunk) {
	c.t.Helper()
	var v struct {
		Info   store.Info      `json:"info"`
		Chunks []session.Chunk `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(c.ok("show", "--json", string(id))), &v); err != nil {
		c.t.Fatal(err)
	}
	return v.Info, v.Chunks
}

// effects counts the effect log's lines by run and effect number.
func (c *built) effects() map[session.ID]map[int]int {
	c.t.Helper()
	out := map[session.ID]map[int]int{}
	f, err := os.Open(filepath.Join(c.home, "effects.log"))
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		n, err := strconv.Atoi(fields[len(fields)-1])
		if len(fields) != 3 || err != nil {
			c.t.Fatalf("effect log line %q", sc.Text())
		}
		run := session.ID(fields[1])
		if out[run] == nil {
			out[run] = map[int]int{}
		}
		out[run][n]++
	}
	return out
}

// start starts `rath run cluster` with tools that sleep sleepMS (after
// effect sleepOn only, if not 0).
func (c *built) start(sleepMS, sleepOn int) (*exec.Cmd, *bytes.Buffer) {
	c.t.Helper()
	input := fmt.Sprintf(`{"steps":%d,"latency_ms":0,"idempotent":false,"sleep_ms":%d,"sleep_on":%d}`, steps, sleepMS, sleepOn)
	cmd := c.command("run", "cluster", "--input", input)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	return cmd, &errb
}

// runs are the sessions that are runs' inputs (they carry an owner).
func runs(infos map[session.ID]store.Info) map[session.ID]store.Info {
	out := map[session.ID]store.Info{}
	for id, i := range infos {
		if i.Labels[rath.OwnerLabel] != "" {
			out[id] = i
		}
	}
	return out
}

// checkFinished checks a finished run through its output: every call has
// one result, the answer came, the chain verifies, and no effect happened
// twice — an effect whose call succeeded happened once. It returns how
// many calls are recorded interrupted.
func (c *built) checkFinished(run, out session.ID) int {
	c.t.Helper()
	info, chunks := c.show(out)
	if info.Status != store.StatusClosed || info.Labels[runctx.Label] != string(run) {
		c.t.Fatalf("output %s of run %s: %+v", out, run, info)
	}
	c.ok("verify", string(out))
	results := map[string]*session.ToolResult{}
	for _, ch := range chunks {
		if r := ch.ToolResult; r != nil {
			if results[r.CallID] != nil {
				c.t.Fatalf("run %s: call %s has two results", run, r.CallID)
			}
			results[r.CallID] = r
		}
	}
	last := chunks[len(chunks)-1]
	if last.Assistant == nil || last.Assistant.Text != fmt.Sprintf("recorded %d effects", steps) {
		c.t.Fatalf("run %s ends with %+v", run, last)
	}
	effects := c.effects()[run]
	cut := 0
	for n := 1; n <= steps; n++ {
		r := results[fmt.Sprintf("call_%d", n)]
		switch {
		case r == nil:
			c.t.Fatalf("run %s: call_%d has no result", run, n)
		case effects[n] > 1:
			c.t.Fatalf("run %s: effect %d happened %d times", run, n, effects[n])
		case r.Error == nil && effects[n] != 1:
			c.t.Fatalf("run %s: call_%d succeeded, but its effect happened %d times", run, n, effects[n])
		case r.Error != nil:
			c.t.Fatalf("run %s: call_%d failed: %+v", run, n, r.Error)
		}
	}
	for _, ch := range chunks {
		if a := ch.Approval; a != nil && session.IsReview(a.Verdict) {
			cut++
		}
	}
	return cut
}

// finish resumes an interrupted run to its end and returns its output.
// A run that stops for a review (a call cut short whose effect is
// unknown) is settled as a truthful person would: the effect log says
// whether the call's effect happened.
func (c *built) finish(run session.ID) session.ID {
	c.t.Helper()
	out, errs, code := c.run("resume", "--quiet", string(run))
	for range 2 {
		if code == 0 {
			return session.ID(strings.TrimSpace(out))
		}
		if !strings.Contains(errs, "needs a review") {
			break
		}
		out, errs, code = c.run(append([]string{"review", string(run), "--quiet"}, c.verdict(run)...)...)
	}
	c.t.Fatalf("rath resume %s: exit %d\n%s", run, code, errs)
	return ""
}

// verdict is what the effect log says of the call run waits on.
func (c *built) verdict(run session.ID) []string {
	c.t.Helper()
	info, _ := c.show(run)
	var u struct {
		Calls []session.ToolCall `json:"calls"`
	}
	if err := json.Unmarshal([]byte(info.Labels[rath.ReviewLabel]), &u); err != nil || len(u.Calls) != 1 {
		c.t.Fatalf("run %s waits on %q: %v", run, info.Labels[rath.ReviewLabel], err)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(u.Calls[0].ID, "call_"))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.effects()[run][n] == 1 {
		return []string{"--happened"}
	}
	return []string{"--not-happened"}
}

// outputOf finds the output of a finished run in a listing.
func outputOf(infos map[session.ID]store.Info, run session.ID) session.ID {
	for id, i := range infos {
		if i.Labels[runctx.Label] == string(run) && i.Labels[rath.WorkflowLabel] == "cluster" && i.Status == store.StatusClosed {
			return id
		}
	}
	return ""
}

func killedInsideATool(t *testing.T, c *built) {
	cmd, errb := c.start(600_000, 2) // effect 2 is made, then its call holds
	defer cmd.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	var run session.ID
	for run == "" {
		for r, byN := range c.effects() {
			if byN[2] == 1 {
				run = r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("effect 2 never happened\n%s", errb)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Alive: active, not interrupted, not to be resumed.
	if st := c.ls()[run].Status; st != store.StatusActive {
		t.Fatalf("a live run is %s", st)
	}
	if n := len(c.ls("--status", "interrupted")); n != 0 {
		t.Fatalf("%d interrupted sessions while the run lives", n)
	}
	c.fails(1, "is live", "resume", string(run))

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !strings.Contains(errb.String(), "run cluster "+string(run)) {
		t.Fatalf("rath run did not name its run on stderr:\n%s", errb)
	}

	c.ok("verify")
	interrupted := c.ls("--status", "interrupted")
	var partial session.ID
	for id, i := range interrupted {
		if i.Status != rath.StatusInterrupted {
			t.Fatalf("--status interrupted listed %s %s", id, i.Status)
		}
		if id != run {
			partial = id
		}
	}
	if _, ok := interrupted[run]; !ok || partial == "" || len(interrupted) != 2 {
		t.Fatalf("interrupted after the kill: %v (run %s)", interrupted, run)
	}
	if text := c.ok("ls"); !strings.Contains(text, string(run)+"  interrupted  cluster  ") {
		t.Fatalf("rath ls:\n%s", text)
	}
	if text := c.ok("show", string(partial)); !strings.Contains(text, "rath resume "+string(run)) {
		t.Fatalf("rath show of an interrupted session:\n%s", text)
	}

	// Its workflow must be registered.
	rt, err := rath.Open(t.Context(), rath.Config{Home: c.home, Store: c.storeURL})
	if err != nil {
		t.Fatal(err)
	}
	setWorkflow := func(name string) {
		if err := rt.Store.SetLabel(t.Context(), run, rath.RunWorkflowLabel, name); err != nil {
			t.Fatal(err)
		}
	}
	setWorkflow("nosuch")
	c.fails(1, `ran workflow "nosuch", which is not registered here`, "resume", string(run))
	setWorkflow("cluster")
	rt.Close()

	// Resumed by its agent's session: the run is found, and waits for a
	// person to say whether call_2, cut short by the kill, took effect.
	c.fails(1, "needs a review: the call to record_effect (call_2)", "resume", string(partial))
	if _, ok := c.ls("--status", "needs_review")[run]; !ok {
		t.Fatalf("--status needs_review does not list run %s", run)
	}
	c.fails(1, "needs a review", "resume", string(run))
	out := session.ID(strings.TrimSpace(c.ok("review", string(run), "--happened", "--result", "recorded effect 2", "--quiet")))
	if c.checkFinished(run, out) != 1 {
		t.Fatalf("run %s: call_2 was not settled by one review", run)
	}
	_, chunks := c.show(out)
	for _, ch := range chunks {
		if r := ch.ToolResult; r != nil && r.CallID == "call_2" && r.Content != "recorded effect 2" {
			t.Fatalf("call_2 has not the result its review gave: %+v", r)
		}
	}
	if effects := c.effects()[run]; len(effects) != steps {
		t.Fatalf("effects %v", effects)
	}
	after := c.ls()
	if after[run].Status != store.StatusClosed || after[partial].Status != store.StatusFailed {
		t.Fatalf("after the resume: run %s, the killed attempt's session %s", after[run].Status, after[partial].Status)
	}
	for id, i := range after {
		if i.Labels[runctx.Label] == string(run) && i.Status != store.StatusClosed && i.Status != store.StatusFailed {
			t.Fatalf("after the resume, the run's session %s (%s) is %s", id, i.Lineage.Op, i.Status)
		}
	}
	c.fails(1, "has finished (closed)", "resume", string(run))
	c.ok("verify")
}

// killAfter SIGKILLs the started cmd once delay has passed since begin,
// unless it ended by itself before: then it must have succeeded, and took
// is how long it took.
func (c *built) killAfter(cmd *exec.Cmd, errb *bytes.Buffer, begin time.Time, delay time.Duration) (killed bool, took time.Duration) {
	c.t.Helper()
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	var err error
	select {
	case err = <-ended:
		took = time.Since(begin)
	case <-time.After(delay - time.Since(begin)):
		cmd.Process.Signal(syscall.SIGKILL)
		err = <-ended
		took = time.Since(begin) // it may have ended by itself as the signal was sent
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	killed = ws.Signaled() && ws.Signal() == syscall.SIGKILL
	if !killed && err != nil && !strings.Contains(errb.String(), "needs a review") { // a resume stops for one
		c.t.Fatalf("rath %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, errb)
	}
	return killed, took
}

// afterKill checks the store once no rath process lives: it verifies, and
// nothing is active. It returns the listing.
func (c *built) afterKill() map[session.ID]store.Info {
	c.t.Helper()
	c.ok("verify")
	all := c.ls()
	for id, info := range all {
		if info.Status == store.StatusActive {
			c.t.Fatalf("%s is active, but no rath process lives", id)
		}
	}
	return all
}

func killedAtRandom(t *testing.T, c *built) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	// One run to its end: how long a whole run takes, for the kills to
	// fall anywhere within one. Every run that ends before its kill
	// shortens the span (the machine may be busier than at first).
	begin := time.Now()
	cmd, errb := c.start(sleepMS, 0)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rath run: %v\n%s", err, errb)
	}
	span := time.Since(begin)
	seen := runs(c.ls())
	for run := range seen {
		c.checkFinished(run, outputOf(c.ls(), run))
	}
	random := func() time.Duration { return time.Duration(rng.Int64N(max(int64(span), 1))) }
	startAndKill := func(args ...string) bool {
		begin := time.Now()
		cmd := c.command(args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killed, took := c.killAfter(cmd, &errb, begin, random())
		if !killed && took < span {
			span = took
		}
		return killed
	}
	input := fmt.Sprintf(`{"steps":%d,"latency_ms":0,"idempotent":false,"sleep_ms":%d}`, steps, sleepMS)

	kills, interrupted, inCall, resumesKilled := 0, 0, 0, 0
	for i := 0; kills < 30; i++ {
		if i == 200 {
			t.Fatalf("only %d of %d runs were killed before they ended", kills, i)
		}
		killed := startAndKill("run", "cluster", "--input", input)
		if killed {
			kills++
		}
		all := c.afterKill()
		var run session.ID
		for id := range runs(all) {
			if _, old := seen[id]; !old {
				if run != "" {
					t.Fatalf("two new runs: %s and %s", run, id)
				}
				run = id
				seen[id] = all[id]
			}
		}
		if run == "" {
			// Killed before the run was recorded: nothing of it ran.
			if !killed {
				t.Fatal("a run ended without being recorded")
			}
			continue
		}
		st, checked := all[run].Status, false
		switch {
		case st == rath.StatusInterrupted && killed:
			interrupted++
		case st != store.StatusClosed:
			t.Fatalf("run %s is %s after rath run ended (killed: %v)", run, st, killed)
		}
		// Resume it; a third of the resumes are killed too.
		for st == rath.StatusInterrupted || st == rath.StatusNeedsReview {
			if _, ok := c.ls("--status", string(st))[run]; !ok {
				t.Fatalf("--status %s does not list run %s", st, run)
			}
			if rng.IntN(3) > 0 {
				out := c.finish(run)
				if c.checkFinished(run, out) > 0 {
					inCall++
				}
				st, checked = store.StatusClosed, true
				break
			}
			if st == rath.StatusNeedsReview {
				c.run(append([]string{"review", string(run), "--quiet"}, c.verdict(run)...)...)
				if startAndKill("resume", string(run)) {
					kills++
					resumesKilled++
				}
			} else if startAndKill("resume", string(run)) {
				kills++
				resumesKilled++
			}
			all = c.afterKill()
			if st = all[run].Status; st != store.StatusClosed && st != rath.StatusInterrupted && st != rath.StatusNeedsReview {
				t.Fatalf("run %s is %s after rath resume ended", run, st)
			}
		}
		if !checked {
			c.checkFinished(run, outputOf(all, run))
		}
	}
	// Nothing ran for a run that was not recorded.
	for run := range c.effects() {
		if _, ok := seen[run]; !ok {
			t.Fatalf("effects of %s, which is no recorded run", run)
		}
	}
	if interrupted == 0 {
		t.Fatal("no kill interrupted a run")
	}
	t.Logf("%d kills (%d of them of rath resume): %d interrupted runs resumed, %d of them cut inside a tool call and settled by a review",
		kills, resumesKilled, interrupted, inCall)
	c.ok("verify")
}
