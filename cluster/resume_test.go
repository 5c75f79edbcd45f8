package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A run that fails part-way — here its workflow cannot be built on its
// third slice: its recorded input was broken while it waited — is resumed
// once the cause is fixed, and ends done from its committed steps: no
// effect (its tool is not idempotent) happens twice, and its ledger says
// who resumed it and how it had ended.
func TestResumeFailedRun(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		const steps = 8
		input := fmt.Sprintf(`{"steps":%d,"latency_ms":150,"idempotent":false}`, steps)
		a := e.worker("a")
		id := e.submit(input)
		e.waitFor("two effects", 30*time.Second, func() bool { return e.effectsOf(id) >= 2 })
		e.drain(a)
		e.waitState(id, cluster.StateQueued, 30*time.Second)
		e.setInput(id, "{broken")
		e.worker("b")
		failed := e.waitState(id, cluster.StateFailed, 30*time.Second)
		if !strings.Contains(failed.Error, "not a JSON config") {
			t.Fatalf("failed with %q", failed.Error)
		}
		done := e.effectsOf(id)
		if done < 2 || done >= steps {
			t.Fatalf("%d effects before the failure", done)
		}
		e.setInput(id, input)
		if err := e.cl.Resume(context.Background(), id, "fay", "input fixed"); err != nil {
			t.Fatal(err)
		}
		r := e.waitState(id, cluster.StateDone, 30*time.Second)
		if r.Error != "" || r.Slices <= failed.Slices {
			t.Fatalf("after resuming: %+v (failed at slice %d)", r, failed.Slices)
		}
		e.exactlyOnce(id, steps)
		e.verify(id)
		e.resumeNoted(id, "resumed by fay: input fixed", "(was failed: build cluster:")
	})
}

// Cancelled runs are resumed from their committed steps: one resumed with
// no live worker waits unroutable, and a worker that comes finishes it;
// one resumed while a worker lives is queued for it. Their cancel requests
// are gone and their inputs, marked failed by the cancel, are active
// again.
func TestResumeCancelledRun(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		// Long enough that the drain comes before the runs end, even on a
		// loaded machine: a drain lets the slice in flight finish.
		const steps = 16
		ctx := context.Background()
		a := e.worker("a", "--concurrency", "2")
		input := fmt.Sprintf(`{"steps":%d,"latency_ms":250,"idempotent":false}`, steps)
		early, late := e.submit(input), e.submit(input)
		e.waitFor("two effects of each run", 30*time.Second, func() bool { return e.effectsOf(early) >= 2 && e.effectsOf(late) >= 2 })
		e.drain(a)
		before := map[session.ID]int{}
		for _, id := range []session.ID{early, late} {
			e.waitState(id, cluster.StateQueued, 30*time.Second)
			if err := e.cl.Cancel(ctx, id, "dave", "not needed"); err != nil {
				t.Fatal(err)
			}
			e.waitState(id, cluster.StateCancelled, 10*time.Second)
			if info := e.info(id); info.Status != store.StatusFailed {
				t.Fatalf("a cancelled run's input is %s", info.Status)
			}
			before[id] = e.effectsOf(id)
		}

		if err := e.cl.Resume(ctx, early, "erin", ""); err != nil {
			t.Fatal(err)
		}
		r := e.waitState(early, cluster.StateUnroutable, 10*time.Second)
		if r.Cancel != "" || r.Error != "" {
			t.Fatalf("resumed run: %+v", r)
		}
		e.uncancelled(early)
		if n := e.effectsOf(early); n != before[early] {
			t.Fatalf("effects went from %d to %d with no worker", before[early], n)
		}
		e.worker("b")
		if err := e.cl.Resume(ctx, late, "erin", "after all"); err != nil {
			t.Fatal(err)
		}
		e.uncancelled(late)
		for _, id := range []session.ID{early, late} {
			e.waitState(id, cluster.StateDone, 30*time.Second)
			e.exactlyOnce(id, steps)
			e.verify(id)
			e.resumeNoted(id, "resumed by erin", "(was cancelled by dave: not needed)")
		}
	})
}

// uncancelled checks that a resumed run's input has no cancel request and
// is active.
func (e *env) uncancelled(id session.ID) {
	e.t.Helper()
	info := e.info(id)
	if info.Status != store.StatusActive || info.Labels[cluster.LabelCancel] != "" || info.Labels[cluster.LabelCancelBy] != "" {
		e.t.Fatalf("resumed run's input: status %s, labels %v", info.Status, info.Labels)
	}
}

// Resume refuses a done run and one not over, each with its own kind of
// ErrNotResumable, and leaves them as they were; a session that is no run
// is ErrNotARun.
func TestResumeRefusals(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.worker("w", "--concurrency", "1")
		done := e.submit(`{"steps":1,"latency_ms":1,"idempotent":true}`)
		e.waitState(done, cluster.StateDone, 30*time.Second)
		err := e.cl.Resume(ctx, done, "gil", "")
		if !errors.Is(err, cluster.ErrNotResumable) || !errors.Is(err, cluster.ErrFinal) || errors.Is(err, cluster.ErrNotWaiting) {
			t.Fatalf("resume of a done run: %v", err)
		}
		if r := e.run(done); r.State != cluster.StateDone {
			t.Fatalf("a refused resume changed the run: %+v", r)
		}

		long := `{"steps":200,"latency_ms":30,"idempotent":true}`
		first, second := e.submit(long), e.submit(long)
		var queued session.ID
		e.waitFor("one run running, the other queued", 30*time.Second, func() bool {
			s1, s2 := e.run(first).State, e.run(second).State
			switch {
			case s1 == cluster.StateRunning && s2 == cluster.StateQueued:
				queued = second
			case s2 == cluster.StateRunning && s1 == cluster.StateQueued:
				queued = first
			}
			return queued != ""
		})
		err = e.cl.Resume(ctx, queued, "gil", "")
		if !errors.Is(err, cluster.ErrNotResumable) || !errors.Is(err, cluster.ErrNotWaiting) || errors.Is(err, cluster.ErrFinal) {
			t.Fatalf("resume of a run not over: %v", err)
		}
		if !strings.Contains(err.Error(), "not over") {
			t.Fatalf("resume of a run not over says: %v", err)
		}

		plain := session.FromUser("not a run")
		if err := e.rt.Store.Commit(ctx, plain, ""); err != nil {
			t.Fatal(err)
		}
		if err := e.cl.Resume(ctx, plain.ID(), "gil", ""); !errors.Is(err, cluster.ErrNotARun) {
			t.Fatalf("resume of a plain session: %v", err)
		}
		for _, id := range []session.ID{first, second} {
			if err := e.cl.Cancel(ctx, id, "gil", "done testing"); err != nil && !errors.Is(err, cluster.ErrFinal) {
				t.Fatal(err)
			}
		}
	})
}

// A verdict given for one approval (its paused session's head) does not
// land on the next one the run waits for: it is refused with ErrNotWaiting
// and the run still waits; the verdict for the head it waits at goes on.
func TestApproveAtRefusesAStaleHead(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.worker("w")
		id := e.submit(`{"steps":2,"latency_ms":1,"idempotent":true,"tool_approval":true}`)
		e.waitState(id, cluster.StateWaitingApproval, 30*time.Second)
		first := e.pausedHead(id)
		if err := e.cl.ApproveAt(ctx, id, first, true, "hal", "first call"); err != nil {
			t.Fatal(err)
		}
		var second session.ChunkID
		e.waitFor("the run waiting at its second approval", 30*time.Second, func() bool {
			if e.run(id).State != cluster.StateWaitingApproval {
				return false
			}
			second = e.pausedHead(id)
			return second != first
		})
		err := e.cl.ApproveAt(ctx, id, first, true, "hal", "meant for the first call")
		if !errors.Is(err, cluster.ErrNotWaiting) {
			t.Fatalf("a verdict for a settled approval: %v", err)
		}
		if r := e.run(id); r.State != cluster.StateWaitingApproval || e.pausedHead(id) != second {
			t.Fatalf("after a refused verdict: %s at %s", r.State, e.pausedHead(id))
		}
		if c := e.effectCounts(); c[string(id)+" 2"] != 0 {
			t.Fatal("the second call ran on the first call's verdict")
		}
		if err := e.cl.ApproveAt(ctx, id, second, true, "hal", "second call"); err != nil {
			t.Fatal(err)
		}
		e.waitState(id, cluster.StateDone, 30*time.Second)
		e.exactlyOnce(id, 2)
		if err := e.cl.ApproveAt(ctx, id, second, true, "hal", "again"); !errors.Is(err, cluster.ErrNotWaiting) {
			t.Fatalf("a verdict on a done run: %v", err)
		}
	})
}

// drain stops worker p with SIGTERM and waits for it to exit: it hands its
// runs back to the queue.
func (e *env) drain(p *proc) {
	e.t.Helper()
	p.signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup's kill
	case <-time.After(30 * time.Second):
		e.t.Fatalf("worker %s did not drain\n%s", p.id, e.logs())
	}
}

// effectsOf counts run id's effects in the effect log.
func (e *env) effectsOf(id session.ID) int {
	e.t.Helper()
	n := 0
	for k, c := range e.effectCounts() {
		if strings.HasPrefix(k, string(id)+" ") {
			n += c
		}
	}
	return n
}

// setInput rewrites the input text a run's record holds (what each slice
// builds its workflow with), leaving the rest of the record alone.
func (e *env) setInput(id session.ID, text string) {
	e.t.Helper()
	info := e.info(id)
	var rec map[string]json.RawMessage
	if err := json.Unmarshal([]byte(info.Labels[cluster.LabelRun]), &rec); err != nil {
		e.t.Fatal(err)
	}
	in, err := json.Marshal(text)
	if err != nil {
		e.t.Fatal(err)
	}
	rec["input"] = in
	b, err := json.Marshal(rec)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.rt.Store.SetLabel(context.Background(), id, cluster.LabelRun, string(b)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) info(id session.ID) store.Info {
	e.t.Helper()
	info, err := e.rt.Store.Info(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

// pausedHead is the head of the session run id waits on.
func (e *env) pausedHead(id session.ID) session.ChunkID {
	e.t.Helper()
	return e.info(e.run(id).Output).Head
}

// resumeNoted checks that the run's history holds a lifecycle note of its
// resumption saying each of says.
func (e *env) resumeNoted(id session.ID, says ...string) {
	e.t.Helper()
	_, history, err := e.cl.RunStatus(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	var notes []string
	for _, ch := range history {
		if ch.Note == nil || !strings.HasPrefix(ch.Note.Text, "lifecycle: run resumed") {
			continue
		}
		notes = append(notes, ch.Note.Text)
		ok := true
		for _, s := range says {
			ok = ok && strings.Contains(ch.Note.Text, s)
		}
		if ok {
			return
		}
	}
	e.t.Fatalf("no resumption note saying %q in the run's history (resumption notes: %q)", says, notes)
}
