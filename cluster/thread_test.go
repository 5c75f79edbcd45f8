package cluster_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// Runs submitted on one session go one at a time, in the order submitted,
// and each starts from where the one before it ended: the example's model
// counts the tool results in its transcript, so a run carried forward
// from one that recorded three effects records only those past three.
// Both later runs are submitted while the first works and wait behind it;
// every effect of one run comes before any of the next.
func TestRunsOnASessionQueueAndContinue(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.commitSession("a conversation")
		e.worker("a", "--concurrency", "4")
		first := e.submitOn(s, `{"steps":3,"latency_ms":200,"idempotent":false}`)
		second := e.submitOn(s, `{"steps":5,"latency_ms":20,"idempotent":false}`)
		third := e.submitOn(s, `{"steps":6,"latency_ms":20,"idempotent":false}`)
		if r := e.run(second); r.State != cluster.StateBehind && e.run(first).State != cluster.StateDone {
			t.Fatalf("the second run is %s (behind %q) while the first works", r.State, r.Behind)
		}
		if r := e.run(third); r.State == cluster.StateBehind && r.Behind != second {
			t.Fatalf("the third run waits behind %s, not the second run %s", r.Behind, second)
		}
		for _, id := range []session.ID{first, second, third} {
			e.waitState(id, cluster.StateDone, 60*time.Second)
			e.verify(id)
		}
		got := e.effectOrder()
		want := []string{string(first) + " 1", string(first) + " 2", string(first) + " 3",
			string(second) + " 4", string(second) + " 5", string(third) + " 6"}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("effects in order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// The third's input: a fork of the session carrying the second's
		// output, with the decision saying so.
		in, err := e.rt.Store.Load(ctx, third)
		if err != nil {
			t.Fatal(err)
		}
		if lin := in.Lineage(); len(lin.Parents) != 1 || lin.Parents[0] != s {
			t.Fatalf("the third run's input descends from %v, not the session %s", lin.Parents, s)
		}
		d := e.decision(in, "cluster.session")
		if d == nil || d.Choice != string(e.run(second).Output) || !strings.Contains(d.Reason, "after run "+string(second)) {
			t.Fatalf("the third run's session decision: %+v (second's output %s)", d, e.run(second).Output)
		}
		// The second's output is carried whole: its chain, the same
		// chunks, starts the third's input.
		out, err := e.rt.Store.Load(ctx, e.run(second).Output)
		if err != nil {
			t.Fatal(err)
		}
		if in.Len() <= out.Len() || in.Chunk(out.Len()-1).ID != out.Head() {
			t.Fatalf("the third run's input (%d chunks) does not start with the second's output (%d chunks, head %s)", in.Len(), out.Len(), out.Head())
		}
		if r := e.run(third); r.Session != s || r.Behind != "" {
			t.Fatalf("the third run's record: session %s behind %q", r.Session, r.Behind)
		}
	})
}

// A run behind one that is cancelled (or fails) is released all the same,
// and starts from the session itself when no run on it is done. A run
// cancelled while behind releases the one behind it.
func TestRunBehindCancelledRun(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.commitSession("another conversation")
		e.worker("a", "--concurrency", "4")
		slow := e.submitOn(s, `{"steps":400,"latency_ms":50,"idempotent":true}`)
		waiting := e.submitOn(s, `{"steps":2,"latency_ms":20,"idempotent":true}`)
		last := e.submitOn(s, `{"steps":3,"latency_ms":20,"idempotent":true}`)
		e.waitState(waiting, cluster.StateBehind, 10*time.Second)
		if err := e.cl.Cancel(ctx, waiting, "ann", "not this one"); err != nil {
			t.Fatal(err)
		}
		e.waitState(waiting, cluster.StateCancelled, 10*time.Second)
		if r := e.run(last); r.State != cluster.StateBehind || r.Behind != slow {
			t.Fatalf("with the slow run still working, the last run is %s behind %q", r.State, r.Behind)
		}
		e.waitFor("effects of the slow run", 30*time.Second, func() bool { return e.effectsOf(slow) >= 1 })
		if err := e.cl.Cancel(ctx, slow, "ann", "too slow"); err != nil {
			t.Fatal(err)
		}
		e.waitState(slow, cluster.StateCancelled, 30*time.Second)
		e.waitState(last, cluster.StateDone, 60*time.Second)
		if n := e.effectsOf(last); n != 3 {
			t.Fatalf("the last run, carried from the session itself, recorded %d effects, want 3", n)
		}
		if n := e.effectsOf(waiting); n != 0 {
			t.Fatalf("the run cancelled while behind recorded %d effects", n)
		}
		in, err := e.rt.Store.Load(ctx, last)
		if err != nil {
			t.Fatal(err)
		}
		if d := e.decision(in, "cluster.session"); d == nil || d.Choice != string(s) || !strings.Contains(d.Reason, "waited for run "+string(slow)) {
			t.Fatalf("the last run's session decision: %+v", d)
		}
	})
}

// Runs submitted on one session at once, from several goroutines, line up:
// one goes, each other waits behind a different one, and all end done,
// each carrying the output of the one it waited for — so the one effect
// the first records is the only one (the others see it done already).
func TestConcurrentRunsOnASessionLineUp(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.commitSession("a busy conversation")
		const n = 5
		input := `{"steps":1,"latency_ms":20,"idempotent":false}`
		ids := make([]session.ID, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				id, err := e.cl.Submit(ctx, "cluster", cluster.SubmitOptions{Input: &input, Session: s})
				if err != nil {
					t.Error(err)
				}
				ids[i] = id
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		heads, behind := 0, map[session.ID]bool{}
		for _, id := range ids {
			r := e.run(id)
			switch {
			case r.State == cluster.StateBehind && behind[r.Behind]:
				t.Fatalf("two runs wait behind %s", r.Behind)
			case r.State == cluster.StateBehind:
				behind[r.Behind] = true
			default:
				heads++
			}
		}
		if heads != 1 {
			t.Fatalf("%d runs on the session were not behind another, want 1", heads)
		}
		e.worker("a", "--concurrency", "4")
		for _, id := range ids {
			e.waitState(id, cluster.StateDone, 60*time.Second)
		}
		var first session.ID
		for _, id := range ids {
			r := e.run(id)
			if r.Behind != "" {
				t.Fatalf("run %s, done, still names %s as the run it waits for", id, r.Behind)
			}
			in, err := e.rt.Store.Load(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			d := e.decision(in, "cluster.session")
			if d == nil {
				first = id
				continue
			}
			if !strings.Contains(d.Reason, "waited for run ") {
				t.Fatalf("run %s started with %q", id, d.Reason)
			}
		}
		if got := e.effectOrder(); len(got) != 1 || got[0] != string(first)+" 1" {
			t.Fatalf("effects %v, want only the first run's (%s) one", got, first)
		}
	})
}

// commitSession commits a one-message session to continue.
func (e *env) commitSession(text string) session.ID {
	e.t.Helper()
	s := session.FromUser(text)
	if err := e.rt.Store.Commit(context.Background(), s, ""); err != nil {
		e.t.Fatal(err)
	}
	return s.ID()
}

// submitOn submits a run of the cluster example on session s through the
// CLI.
func (e *env) submitOn(s session.ID, input string) session.ID {
	e.t.Helper()
	return e.submit(input, "--session", string(s))
}

// effectOrder is the effect log's "<run> <n>" lines in the order written.
func (e *env) effectOrder() []string {
	e.t.Helper()
	f, err := os.Open(e.effects)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 3 {
			out = append(out, fields[1]+" "+fields[2])
		}
	}
	return out
}

// decision is the last decision of selector on s, nil if none.
func (e *env) decision(s *session.Session, selector string) *session.Decision {
	var d *session.Decision
	for _, c := range s.All() {
		if c.Decision != nil && c.Decision.Selector == selector {
			d = c.Decision
		}
	}
	return d
}

// A failed run on a session resumed while a later run on it works waits
// behind that one, and goes on from its own steps when it ends.
func TestResumeOnABusySession(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		s := e.commitSession("a conversation with a failure")
		input := `{"steps":3,"latency_ms":1,"idempotent":false}`
		first := e.submitOn(s, input)
		second := e.submitOn(s, `{"steps":12,"latency_ms":100,"idempotent":false}`)
		e.setInput(first, "{broken")
		e.worker("a", "--concurrency", "4")
		e.waitState(first, cluster.StateFailed, 30*time.Second)
		e.waitFor("the second run working", 30*time.Second, func() bool { return e.effectsOf(second) >= 1 })
		e.setInput(first, input)
		if err := e.cl.Resume(ctx, first, "eve", "input fixed"); err != nil {
			t.Fatal(err)
		}
		if r := e.run(first); r.State != cluster.StateBehind || r.Behind != second {
			t.Fatalf("resumed while the second run works, the first is %s behind %q", r.State, r.Behind)
		}
		e.waitState(second, cluster.StateDone, 60*time.Second)
		e.waitState(first, cluster.StateDone, 60*time.Second)
		got := e.effectOrder()
		if len(got) != 15 || !strings.HasPrefix(got[11], string(second)+" ") || !strings.HasPrefix(got[12], string(first)+" ") {
			t.Fatalf("effects in order: %v", got)
		}
		e.exactlyOnce(first, 3)
		e.resumeNoted(first, "resumed by eve: input fixed", "(was failed")
	})
}
