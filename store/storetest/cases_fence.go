package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// fenced returns a context whose writes are fenced by run's epoch e.
func fenced(t *testing.T, run session.ID, e int64) context.Context {
	return store.WithFence(t.Context(), store.Fence{Session: run, Epoch: e})
}

// mustAdvance advances id's epoch and fails unless it becomes want.
func mustAdvance(t *testing.T, st store.Store, id session.ID, want int64) int64 {
	t.Helper()
	e, err := st.Advance(ctx(t), id)
	if err != nil || e != want {
		t.Fatalf("Advance(%s) = %d, %v; want %d", id, e, err, want)
	}
	return e
}

// isFenced fails unless err says the writer was fenced out, which is also
// a conflict.
func isFenced(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrFenced) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("%s under a superseded fence: err = %v, want ErrFenced (and ErrConflict)", what, err)
	}
}

// epochIs checks Epoch, Info and List all report want for id.
func epochIs(t *testing.T, st store.Store, id session.ID, want int64) {
	t.Helper()
	e, err := st.Epoch(ctx(t), id)
	if err != nil || e != want {
		t.Fatalf("Epoch(%s) = %d, %v; want %d", id, e, err, want)
	}
	info, err := st.Info(ctx(t), id)
	if err != nil || info.Epoch != want {
		t.Fatalf("Info(%s).Epoch = %d, %v; want %d", id, info.Epoch, err, want)
	}
	all, err := st.List(ctx(t), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(in store.Info) bool { return in.ID == id })
	if i < 0 || all[i].Epoch != want {
		t.Fatalf("List: session %s listed at %d, want epoch %d", id, i, want)
	}
}

func testFenceEpochs(t *testing.T, h Harness) {
	st := h.Open(t)
	run := grow(session.FromUser("run input"), 3, "r")
	other := session.FromUser("another run")
	mustCommit(t, st, run, "")
	mustCommit(t, st, other, "")
	epochIs(t, st, run.ID(), 0)
	for want := int64(1); want <= 3; want++ {
		mustAdvance(t, st, run.ID(), want)
		epochIs(t, st, run.ID(), want)
	}
	epochIs(t, st, other.ID(), 0) // epochs are per session
	// Commits, status and labels leave the epoch alone, and a session
	// derived from the run starts at 0.
	more := run.Append(session.Note("more"))
	mustCommit(t, st, more, run.Head())
	if err := st.SetStatus(ctx(t), run.ID(), store.StatusActive); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabel(ctx(t), run.ID(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	agent := more.Derive("agent:a", nil).Append(session.User("agent"))
	mustCommit(t, st, agent, "")
	epochIs(t, st, run.ID(), 3)
	epochIs(t, st, agent.ID(), 0)
	// Unknown sessions have no epoch.
	unknown := session.NewID()
	if _, err := st.Advance(ctx(t), unknown); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Advance of an unknown session: err = %v, want ErrNotFound", err)
	}
	if _, err := st.Epoch(ctx(t), unknown); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Epoch of an unknown session: err = %v, want ErrNotFound", err)
	}
	// The epoch is durable.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open(t, h)
	epochIs(t, st, run.ID(), 3)
	mustAdvance(t, st, run.ID(), 4)
}

func testFencedCommit(t *testing.T, h Harness) {
	st := open(t, h)
	run := session.FromUser("run input")
	mustCommit(t, st, run, "")
	e1 := mustAdvance(t, st, run.ID(), 1)
	old := fenced(t, run.ID(), e1)

	// Under the current epoch every write goes through: the run's own
	// session, and an agent's session derived from it (new, then appended).
	run2 := run.Append(session.Note("taken by worker 1"))
	if err := st.Commit(old, run2, run.Head()); err != nil {
		t.Fatalf("commit of the run under its current epoch: %v", err)
	}
	agent := run2.Derive("agent:a", nil).Append(session.User("agent"))
	if err := st.Commit(old, agent, ""); err != nil {
		t.Fatalf("new agent session under the current epoch: %v", err)
	}
	agent2 := grow(agent, 3, "a")
	if err := st.Commit(old, agent2, agent.Head()); err != nil {
		t.Fatalf("agent append under the current epoch: %v", err)
	}
	if err := st.Commit(old, agent2, agent.Head()); err != nil { // a retry
		t.Fatalf("retried commit under the current epoch: %v", err)
	}
	if err := st.SetStatus(old, run.ID(), store.StatusActive); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabel(old, run.ID(), "owner", "w1"); err != nil {
		t.Fatal(err)
	}
	// A fence that holds does not hide a head conflict.
	stale := agent.Append(session.User("stale head"))
	if err := st.Commit(old, stale, agent.Head()); !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrFenced) {
		t.Fatalf("head conflict under a current fence: err = %v, want ErrConflict, not ErrFenced", err)
	}

	// Another owner takes the run: worker 1 is fenced out of every write.
	e2 := mustAdvance(t, st, run.ID(), 2)
	isFenced(t, "commit of the run", st.Commit(old, run2.Append(session.Note("late")), run2.Head()))
	isFenced(t, "agent append", st.Commit(old, grow(agent2, 2, "late"), agent2.Head()))
	isFenced(t, "retried agent append", st.Commit(old, agent2, agent.Head()))
	late := run2.Derive("agent:b", nil).Append(session.User("late agent"))
	isFenced(t, "new agent session", st.Commit(old, late, ""))
	isFenced(t, "status of the run", st.SetStatus(old, run.ID(), store.StatusPaused))
	isFenced(t, "status of an agent session", st.SetStatus(old, agent.ID(), store.StatusActive))
	isFenced(t, "label", st.SetLabel(old, run.ID(), "owner", "zombie"))
	isFenced(t, "label removal", st.SetLabel(old, run.ID(), "owner", ""))
	isFenced(t, "agent label", st.SetLabel(old, agent.ID(), "k", "v"))

	// Nothing of it was stored.
	for _, want := range []*session.Session{run2, agent2} {
		got, err := st.Load(ctx(t), want.ID())
		if err != nil {
			t.Fatal(err)
		}
		sameSession(t, got, want)
	}
	if _, err := st.Info(ctx(t), late.ID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a fenced-out new session was stored: %v", err)
	}
	info, err := st.Info(ctx(t), run.ID())
	if err != nil || info.Status != store.StatusActive || info.Labels["owner"] != "w1" || info.Epoch != e2 {
		t.Fatalf("run after fenced-out writes: %+v, %v", info, err)
	}
	info, err = st.Info(ctx(t), agent.ID())
	if err != nil || info.Status != store.StatusOpen || len(info.Labels) != 0 {
		t.Fatalf("agent session after fenced-out writes: %+v, %v", info, err)
	}

	// The new owner writes; so does a writer without a fence.
	cur := fenced(t, run.ID(), e2)
	agent3 := agent2.Append(session.Note("worker 2"))
	if err := st.Commit(cur, agent3, agent2.Head()); err != nil {
		t.Fatalf("commit under the new epoch: %v", err)
	}
	if err := st.SetLabel(cur, run.ID(), "owner", "w2"); err != nil {
		t.Fatal(err)
	}
	agent4 := agent3.Append(session.Note("unfenced"))
	mustCommit(t, st, agent4, agent3.Head())
	got, err := st.Load(ctx(t), agent.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, got, agent4)

	// A fence naming a session the store does not have holds nothing.
	ghost := fenced(t, session.NewID(), 0)
	orphan := session.FromUser("orphan")
	isFenced(t, "commit fenced by an unknown run", st.Commit(ghost, orphan, ""))
	isFenced(t, "label fenced by an unknown run", st.SetLabel(ghost, run.ID(), "owner", "ghost"))
	if _, err := st.Info(ctx(t), orphan.ID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a commit fenced by an unknown run was stored: %v", err)
	}
}

func testFenceRace(t *testing.T, h Harness) {
	st := open(t, h)

	// Two owners, one after the other: the first is fenced out.
	run := session.FromUser("contested run")
	mustCommit(t, st, run, "")
	e1 := mustAdvance(t, st, run.ID(), 1)
	e2 := mustAdvance(t, st, run.ID(), 2)
	a1 := run.Derive("agent:a", nil).Append(session.User("owner 1"))
	a2 := run.Derive("agent:a", nil).Append(session.User("owner 2"))
	isFenced(t, "commit by the earlier owner", st.Commit(fenced(t, run.ID(), e1), a1, ""))
	if err := st.Commit(fenced(t, run.ID(), e2), a2, ""); err != nil {
		t.Fatalf("commit by the latest owner: %v", err)
	}

	// Fenced-out and current writers at once, each on a session of its
	// own: every current one succeeds, every fenced-out one fails alone.
	const writers = 40
	var wg sync.WaitGroup
	errs := make([]error, writers)
	subs := make([]*session.Session, writers)
	for i := range writers {
		e := e2
		if i%2 == 1 {
			e = e1
		}
		subs[i] = grow(run.Derive("agent:w", nil), 2, fmt.Sprint(i))
		wg.Go(func() {
			fctx := fenced(t, run.ID(), e)
			if errs[i] = st.Commit(fctx, subs[i], ""); errs[i] == nil {
				next := subs[i].Append(session.Note("next"))
				if errs[i] = st.Commit(fctx, next, subs[i].Head()); errs[i] == nil {
					subs[i] = next
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 1 {
			isFenced(t, fmt.Sprint("writer ", i), err)
			if _, err := st.Info(ctx(t), subs[i].ID()); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("fenced-out writer %d's session was stored: %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("current writer %d: %v", i, err)
		}
		got, err := st.Load(ctx(t), subs[i].ID())
		if err != nil {
			t.Fatal(err)
		}
		sameSession(t, got, subs[i])
	}

	raceAdvance(t, st)
	raceSelfFenced(t, st)
}

// raceSelfFenced has writers append to the run's own session under its
// fence, all from the same head at once, half of them under a superseded
// epoch: every one of those is fenced out, exactly one current writer
// wins, the others lose the compare-and-swap (a conflict, not a fence),
// and nobody deadlocks.
func raceSelfFenced(t *testing.T, st store.Store) {
	run := session.FromUser("run appended to under its own fence")
	mustCommit(t, st, run, "")
	old := mustAdvance(t, st, run.ID(), 1)
	cur := mustAdvance(t, st, run.ID(), 2)
	const writers = 20
	var wg sync.WaitGroup
	errs := make([]error, writers)
	nexts := make([]*session.Session, writers)
	for i := range writers {
		e := cur
		if i%2 == 1 {
			e = old
		}
		nexts[i] = run.Append(session.Note(fmt.Sprint("writer ", i)))
		wg.Go(func() { errs[i] = st.Commit(fenced(t, run.ID(), e), nexts[i], run.Head()) })
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case i%2 == 1:
			isFenced(t, fmt.Sprint("self-fenced writer ", i), err)
		case err == nil:
			if won >= 0 {
				t.Fatalf("writers %d and %d both moved the head from %s", won, i, run.Head().Short())
			}
			won = i
		case errors.Is(err, store.ErrFenced) || !errors.Is(err, store.ErrConflict):
			t.Fatalf("current writer %d: %v, want success or a plain conflict", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no current writer moved the head")
	}
	got, err := st.Load(ctx(t), run.ID())
	if err != nil {
		t.Fatal(err)
	}
	sameSession(t, got, nexts[won])
}

// raceAdvance has owners take one run at once, each advancing its epoch and
// then committing a session of its own under it. The epochs are distinct,
// 1..owners, and a commit succeeds exactly when its epoch was the latest
// while it ran: it must fail if a later Advance returned before it began,
// and succeed if none began before it ended.
func raceAdvance(t *testing.T, st store.Store) {
	run := session.FromUser("run taken by many")
	mustCommit(t, st, run, "")
	const owners = 20
	type attempt struct {
		epoch                  int64
		advStart, advEnd       time.Time
		commitStart, commitEnd time.Time
		sess                   *session.Session
		err                    error
	}
	as := make([]attempt, owners)
	var wg sync.WaitGroup
	for i := range owners {
		wg.Go(func() {
			a := &as[i]
			a.sess = run.Derive("agent:owner", nil).Append(session.User(fmt.Sprint("owner ", i)))
			a.advStart = time.Now()
			e, err := st.Advance(ctx(t), run.ID())
			a.advEnd = time.Now()
			if err != nil {
				t.Error(err)
				return
			}
			a.epoch = e
			a.commitStart = time.Now()
			a.err = st.Commit(fenced(t, run.ID(), e), a.sess, "")
			a.commitEnd = time.Now()
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	byEpoch := make(map[int64]*attempt, owners)
	for i := range as {
		a := &as[i]
		if a.epoch < 1 || a.epoch > owners || byEpoch[a.epoch] != nil {
			t.Fatalf("concurrent Advance returned epoch %d twice or out of 1..%d", a.epoch, owners)
		}
		byEpoch[a.epoch] = a
	}
	epochIs(t, st, run.ID(), owners)
	for e := int64(1); e <= owners; e++ {
		a, next := byEpoch[e], byEpoch[e+1]
		switch {
		case a.err != nil && !errors.Is(a.err, store.ErrFenced):
			t.Fatalf("owner of epoch %d: %v", e, a.err)
		case next != nil && a.commitStart.After(next.advEnd) && a.err == nil:
			t.Fatalf("owner of epoch %d committed after epoch %d was taken", e, e+1)
		case (next == nil || a.commitEnd.Before(next.advStart)) && a.err != nil:
			t.Fatalf("owner of epoch %d, the latest while it committed, was refused: %v", e, a.err)
		}
		_, err := st.Info(ctx(t), a.sess.ID())
		if stored := err == nil; stored != (a.err == nil) {
			t.Fatalf("owner of epoch %d: commit returned %v, but stored = %v (%v)", e, a.err, stored, err)
		}
	}
}
