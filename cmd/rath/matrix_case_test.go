package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// reference is a workflow's uninterrupted run on one store.
type reference struct {
	// outputs are the projections of the outputs of the runs it made, by
	// workflow (a workflow may run another first: report runs research).
	outputs map[string]projection
	// runStart is when the run was recorded (its input session created),
	// runEnd when its last output chunk was appended, both from the start
	// of the process, and both by the clock of the process: the span of
	// the run.
	runStart, runEnd time.Duration
	// window is the span within which moments after the run's line are
	// drawn: the run's span at first, narrowed as runs end before their
	// signal.
	window time.Duration
}

// workflow runs the matrix's cases of w on st: a reference run, then
// interruptions until cfg.per of them land inside a run.
func (m *matrix) workflow(t *testing.T, st matrixStore, si, wi int, w rath.Workflow) {
	rng := m.cfg.rng(st.name, w.Name)
	fresh := st.cases(t)
	ref := m.reference(t, st, w, fresh)
	// A workflow none of whose interruptions has landed yet gets three
	// times the tries: a run of a few tens of milliseconds on a busy
	// machine is missed often, and a matrix that gives up on it covers
	// every workflow but the quickest.
	tries := m.cfg.tries * m.cfg.per
	landed, i := 0, 0
	for ; landed < m.cfg.per && (i < tries || landed == 0 && i < 3*tries); i++ {
		sig := m.cfg.signal(wi, si, landed)
		mo := ref.draw(rng)
		if sig.twice {
			mo.again = time.Duration(1 + rng.Int64N(int64(100*time.Millisecond)))
		}
		if m.interruption(t, st, w, ref, sig, mo, fresh()) {
			landed++
		}
	}
	switch {
	case landed == 0:
		t.Errorf("%s on %s: none of %d interruptions landed inside a run (its run spans %s to %s from the start of rath run, by its clock)",
			w.Name, st.name, i, ref.runStart, ref.runEnd)
	case landed < m.cfg.per:
		// A run of a few milliseconds, on a busy machine, is often over
		// before its line is read: what landed is what the figures count.
		t.Logf("%s on %s: %d of %d interruptions landed inside a run, short of %d (its run spans %s to %s)",
			w.Name, st.name, landed, i, m.cfg.per, ref.runStart, ref.runEnd)
	}
}

// draw is a random moment within a run, timed three ways: a fifth of the
// moments anywhere from the start of the process to the end of its run
// (which includes what a workflow does before its run starts, such as
// report's run of research); two fifths within the run's span as the
// reference's own clock measured it, from the start of the process (a
// process starts more slowly on a busy machine); two fifths within the
// window after the run's line, as the test reads it.
func (r *reference) draw(rng *rand.Rand) moment {
	switch n := rng.IntN(5); {
	case n == 0 || r.runEnd <= r.runStart:
		return moment{after: time.Duration(rng.Int64N(max(int64(r.runEnd), 1)))}
	case n <= 2 || r.window <= 0:
		return moment{after: r.runStart + time.Duration(rng.Int64N(int64(r.runEnd-r.runStart)))}
	}
	return moment{fromRun: true, after: time.Duration(rng.Int64N(max(int64(r.window), 1)))}
}

// missed narrows the window after the run's line to a run that ended
// before a signal drawn within it: from the line as read to when its runs
// closed (runEnd, from the start of the process; 0 if unknown, then to
// when the process ended), so that the delay before the test reads the
// line (a busy machine) is taken out. A window narrowed to nothing leaves
// the draws to the run's span.
func (r *reference) missed(e ended, runEnd time.Duration) {
	if e.runLine <= 0 {
		return
	}
	end := e.took
	if runEnd > 0 {
		end = min(end, runEnd)
	}
	r.window = min(r.window, end-e.runLine)
}

// closedAt is when the last of runs was last written (closed, for an
// ended run), from the start of the process e ran: 0 for none.
func closedAt(all map[session.ID]store.Info, runs []session.ID, e ended) time.Duration {
	var at time.Duration
	for _, run := range runs {
		at = max(at, all[run].Updated.Sub(e.begin))
	}
	return at
}

// reference runs w to its end on a case of its own.
func (m *matrix) reference(t *testing.T, st matrixStore, w rath.Workflow, fresh func() string) *reference {
	t.Helper()
	c := newCase(t, m.bin, fresh(), m.gocache)
	e := c.interrupt(0, moment{}, "run", w.Name)
	if !e.ok() {
		t.Fatalf("%s on %s, uninterrupted: exit %d\n%s", w.Name, st.name, e.code, e.stderr)
	}
	all := c.ls()
	ref := &reference{outputs: map[string]projection{}}
	for _, run := range byCreation(runs(all)) {
		if s := all[run].Status; s != store.StatusClosed {
			t.Fatalf("%s on %s, uninterrupted: run %s is %s", w.Name, st.name, run, s)
		}
		wf := all[run].Labels[rath.RunWorkflowLabel]
		if _, dup := ref.outputs[wf]; dup {
			t.Fatalf("%s on %s: two runs of %s", w.Name, st.name, wf)
		}
		ref.outputs[wf] = c.projectOutput(all, run)
		if wf == w.Name {
			ref.runStart = all[run].Created.Sub(e.begin)
		}
		for _, at := range ref.outputs[wf].times {
			ref.runEnd = max(ref.runEnd, time.Duration(at-e.begin.UnixNano()))
		}
	}
	if _, ok := ref.outputs[w.Name]; !ok {
		t.Fatalf("%s on %s: no run of %s recorded", w.Name, st.name, w.Name)
	}
	ref.window = ref.runEnd - ref.runStart
	if m.cfg.calibrate {
		m.calibrate(t, st, w, ref, fresh())
	}
	return ref
}

// calibrate runs w once more, uninterrupted: its outputs must equal the
// reference's, or the projection misses something that differs between
// any two runs (or the workflow does not do the same twice), and what the
// matrix finds after a resume means nothing.
func (m *matrix) calibrate(t *testing.T, st matrixStore, w rath.Workflow, ref *reference, storeURL string) {
	t.Helper()
	c := newCase(t, m.bin, storeURL, m.gocache)
	if e := c.interrupt(0, moment{}, "run", w.Name); !e.ok() {
		t.Fatalf("%s on %s, uninterrupted: exit %d\n%s", w.Name, st.name, e.code, e.stderr)
	}
	all := c.ls()
	for _, run := range byCreation(runs(all)) {
		wf := all[run].Labels[rath.RunWorkflowLabel]
		want, got := ref.outputs[wf], c.projectOutput(all, run)
		if d, _ := compare(want, got); d >= 0 {
			a, b := around(want.line(d), got.line(d))
			t.Errorf("%s on %s: two uninterrupted runs of %s differ at chunk %d:\nwant %s\ngot  %s", w.Name, st.name, wf, d, a, b)
		}
	}
}

// interruption runs w on a case of its own, sends sig at mo and checks
// what follows. It reports whether the signal landed inside a run.
func (m *matrix) interruption(t *testing.T, st matrixStore, w rath.Workflow, ref *reference, sig matrixSignal, mo moment, storeURL string) bool {
	t.Helper()
	f := &m.total
	f.count(func(f *figures) { f.tried++ })
	c := newCase(t, m.bin, storeURL, m.gocache)
	what := fmt.Sprintf("%s on %s, SIG%s at %s (RATH_MATRIX_SEED=%d)", w.Name, st.name, sig.name, mo, m.cfg.seed)
	e := c.interrupt(sig.sig, mo, "run", w.Name)
	all := c.ls()
	for id, info := range all {
		if info.Status == store.StatusActive {
			t.Fatalf("%s: %s is active, but no rath process lives", what, id)
		}
	}
	rs := byCreation(runs(all))
	var open []session.ID
	for _, run := range rs {
		if all[run].Status != store.StatusClosed {
			open = append(open, run)
		}
	}
	switch {
	case !e.signalled || len(open) == 0 && e.ok():
		// It finished before the signal came.
		if !e.ok() {
			t.Fatalf("%s: it ended before the signal, with exit %d\n%s", what, e.code, e.stderr)
		}
		f.count(func(f *figures) { f.ended++ })
		t.Logf("%s: ended before the signal (in %s, its run's line at %s)", what, e.took.Round(time.Millisecond), e.runLine.Round(time.Millisecond))
		if mo.fromRun {
			ref.missed(e, closedAt(all, rs, e))
		}
		return false
	case len(rs) == 0:
		// Stopped before its run was recorded: nothing of it ran.
		f.count(func(f *figures) { f.before++ })
		t.Logf("%s: landed before the run was recorded (in %s)", what, e.took.Round(time.Millisecond))
		c.ok("verify")
		return false
	case len(open) == 0:
		// Every run was closed when the signal came: the process was ending.
		f.count(func(f *figures) { f.ended++ })
		t.Logf("%s: landed after the run ended (in %s)", what, e.took.Round(time.Millisecond))
		if mo.fromRun {
			ref.missed(e, closedAt(all, rs, e))
		}
		return false
	}
	f.count(func(f *figures) { f.landed++; f.bySignal[sig.name]++ })
	c.ok("verify") // every chain the interrupted process left verifies
	t.Logf("%s: landed (%s into the process, its run's line at %s)", what, e.took.Round(time.Millisecond), e.runLine.Round(time.Millisecond))
	for _, run := range open {
		if s := all[run].Status; s != rath.StatusInterrupted {
			t.Errorf("%s: run %s (%s) is %s, not interrupted (exit %d)%s\n%s", what, run, all[run].Labels[rath.RunWorkflowLabel], s, e.code, cleanStopNote(sig), e.stderr)
			return true
		}
	}
	checkExit(t, what, sig, e, open)

	// Resume what was interrupted, in the order the runs began.
	began := time.Now()
	for _, run := range open {
		r := c.interrupt(0, moment{}, "resume", "--quiet", string(run))
		if !r.ok() && strings.Contains(r.stderr, "needs a review") {
			// A call to a tool that is not idempotent, cut by the signal:
			// settled as not happened, it is made again, and the run
			// goes on as the uninterrupted one did (the review's own
			// chunk is left out of the comparison).
			f.count(func(f *figures) { f.reviewed++ })
			r = c.interrupt(0, moment{}, "review", string(run), "--not-happened", "--reason", "the interrupt matrix", "--quiet")
		}
		if k, ok := knownUnresumable[all[run].Labels[rath.RunWorkflowLabel]]; ok && !r.ok() && strings.Contains(r.stderr, k.says) {
			f.count(func(f *figures) { f.known++ })
			t.Logf("%s: rath resume %s failed as known: %s", what, run, k.why)
			return true
		}
		if !r.ok() {
			t.Errorf("%s: rath resume %s: exit %d\n%s", what, run, r.code, r.stderr)
			return true
		}
		f.count(func(f *figures) { f.resumed++ })
	}
	all = c.ls()
	for _, run := range rs {
		wf := all[run].Labels[rath.RunWorkflowLabel]
		if all[run].Status != store.StatusClosed {
			t.Errorf("%s: run %s (%s) is %s after its resume", what, run, wf, all[run].Status)
			continue
		}
		want, got := ref.outputs[wf], c.projectOutput(all, run)
		d, cut := compare(want, got)
		if cut >= 0 {
			f.count(func(f *figures) { f.cut++ })
			t.Logf("%s: run %s (%s): equal up to chunk %d, the result of a call the signal cut (interrupted, or settled by a review)", what, run, wf, cut)
		}
		if d < 0 {
			f.count(func(f *figures) { f.equal++ })
			continue
		}
		if why, ok := knownDivergent[wf]; ok {
			f.count(func(f *figures) { f.known++ })
			t.Logf("%s: the output of run %s (%s) differs from the uninterrupted run's at chunk %d, a known divergence: %s", what, run, wf, d, why)
			continue
		}
		f.count(func(f *figures) { f.differ++ })
		a, b := around(want.line(d), got.line(d))
		t.Errorf("%s: the output of run %s (%s) differs from the uninterrupted run's at chunk %d of %d (resume point %d)\nwant %s\ngot  %s\nwhere they differ:\nwant %s\ngot  %s",
			what, run, wf, d, len(got.lines), resumePoint(got, began.UnixNano()), clipChunk(want.line(d)), clipChunk(got.line(d)), a, b)
	}
	return true
}

// checkExit checks how rath run ended on sig: killed by SIGKILL; on
// SIGINT and SIGTERM, a clean stop with the signal's exit code and one
// sentence naming `rath resume RUN` (on a second signal, rath may also
// die of it).
func checkExit(t *testing.T, what string, sig matrixSignal, e ended, open []session.ID) {
	t.Helper()
	if sig.sig == syscall.SIGKILL {
		if e.bySignal != syscall.SIGKILL {
			t.Errorf("%s: rath run was not killed: exit %d\n%s", what, e.code, e.stderr)
		}
		return
	}
	if e.code != sig.code && !(sig.twice && e.bySignal == sig.sig) {
		t.Errorf("%s: rath run exited %d (signal %v), want %d%s\n%s", what, e.code, e.bySignal, sig.code, cleanStopNote(sig), e.stderr)
	}
	if sig.twice {
		return // a second signal may end it before it says anything
	}
	named := false
	for _, run := range open {
		named = named || strings.Contains(e.stderr, " resume "+string(run)) // rath [--home H] [--store URL] resume RUN
	}
	if !named {
		t.Errorf("%s: rath run's stderr does not name `rath resume RUN` for %v%s\n%s", what, open, cleanStopNote(sig), e.stderr)
	}
}

// cleanStopNote says, for SIGINT and SIGTERM, what the failure may mean.
func cleanStopNote(sig matrixSignal) string {
	if sig.sig == syscall.SIGKILL {
		return ""
	}
	return " (SIGINT and SIGTERM pass once rath run stops cleanly on them; until then RATH_MATRIX_SIGNALS=KILL)"
}

// projectOutput is the projection of the output of run, which must be
// recorded.
func (c *built) projectOutput(all map[session.ID]store.Info, run session.ID) projection {
	c.t.Helper()
	wf := all[run].Labels[rath.RunWorkflowLabel]
	var outs []session.ID
	for id, i := range all {
		if i.Labels[runctx.Label] == string(run) && i.Labels[rath.WorkflowLabel] == wf && i.Status == store.StatusClosed && id != run {
			outs = append(outs, id)
		}
	}
	if len(outs) != 1 {
		c.t.Fatalf("run %s (%s) has %d outputs: %v", run, wf, len(outs), outs)
	}
	_, chunks := c.show(outs[0])
	kept, reviewed := withoutReviews(chunks)
	p := project(kept, c.home, volatile[wf], firstAttempts(all))
	p.reviewed = reviewed
	return p
}

// byCreation is the ids of infos, oldest first.
func byCreation(infos map[session.ID]store.Info) []session.ID {
	ids := make([]session.ID, 0, len(infos))
	for id := range infos {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b session.ID) int { return infos[a].Created.Compare(infos[b].Created) })
	return ids
}

// clipChunk shortens a projected chunk for a message.
func clipChunk(s string) string {
	if len(s) > 1200 {
		return s[:1200] + "…"
	}
	return s
}
