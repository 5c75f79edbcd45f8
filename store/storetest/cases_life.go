package storetest

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func testGC(t *testing.T, h Harness) {
	st := open(t, h)
	root := grow(session.FromSystem("root"), 100, "r")
	mustCommit(t, st, root, "")
	child := root.Fork().Append(session.User("child keeps the prefix alive"))
	mustCommit(t, st, child, "")
	lone := grow(session.FromUser("lone"), 10, "l")
	mustCommit(t, st, lone, "")
	for _, s := range []*session.Session{root, lone} {
		for _, to := range []store.Status{store.StatusActive, store.StatusClosed} {
			if err := st.SetStatus(ctx(t), s.ID(), to); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Nothing is old enough yet.
	stats, err := st.GC(ctx(t), time.Hour)
	if err != nil || stats.Sessions != 0 {
		t.Fatalf("GC(1h) = %+v, %v; want nothing collected", stats, err)
	}
	time.Sleep(5 * time.Millisecond)
	stats, err = st.GC(ctx(t), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Sessions != 2 || stats.Chunks != lone.Len() {
		t.Fatalf("GC = %+v; want 2 sessions and only the %d chunks nothing else reaches", stats, lone.Len())
	}
	for _, gone := range []*session.Session{root, lone} {
		if _, err := st.Load(ctx(t), gone.ID()); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("collected session still loads: %v", err)
		}
	}
	got, err := st.Load(ctx(t), child.ID())
	if err != nil {
		t.Fatalf("the child lost its shared prefix: %v", err)
	}
	sameSession(t, got, child)
	if err := st.Verify(ctx(t), child.ID()); err != nil {
		t.Fatal(err)
	}
	// The child goes on growing after its base is gone.
	more := grow(child, 5, "m")
	mustCommit(t, st, more, child.Head())
	if got, err := st.Load(ctx(t), more.ID()); err != nil || got.Head() != more.Head() {
		t.Fatalf("commit after GC: %v", err)
	}
}

func testReopen(t *testing.T, h Harness) {
	st := h.Open(t)
	s := grow(session.FromUser("persist me"), 80, "p")
	f := s.Fork().Append(session.User("fork"))
	mustCommit(t, st, s, "")
	mustCommit(t, st, f, "")
	if err := st.SetStatus(ctx(t), s.ID(), store.StatusActive); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabel(ctx(t), s.ID(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(ctx(t), s.ID()); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Load after Close: err = %v, want ErrClosed", err)
	}
	st2 := open(t, h)
	for _, want := range []*session.Session{s, f} {
		got, err := st2.Load(ctx(t), want.ID())
		if err != nil {
			t.Fatal(err)
		}
		sameSession(t, got, want)
	}
	info, err := st2.Info(ctx(t), s.ID())
	if err != nil || info.Status != store.StatusActive || info.Labels["k"] != "v" {
		t.Fatalf("after reopen: %+v, %v", info, err)
	}
}

func testVerify(t *testing.T, h Harness) {
	st := open(t, h)
	s := grow(session.FromUser("q"), 30, "v")
	mustCommit(t, st, s, "")
	if err := st.Verify(ctx(t), s.ID()); err != nil {
		t.Fatalf("untouched session: %v", err)
	}
	h.Tamper(t, s.ID(), 17)
	err := st.Verify(ctx(t), s.ID())
	var ve *session.VerifyError
	if !errors.Is(err, session.ErrTampered) || !errors.As(err, &ve) || ve.Index != 17 {
		t.Fatalf("Verify after tampering with chunk 17: %v", err)
	}
}

func testWatch(t *testing.T, h Harness) {
	st := open(t, h)
	events, err := st.Watch(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("watched")
	mustCommit(t, st, s, "")
	s2 := s.Append(session.User("again"))
	mustCommit(t, st, s2, s.Head())
	for _, want := range []*session.Session{s, s2} {
		select {
		case ev := <-events:
			if ev.ID != want.ID() || ev.Head != want.Head() || ev.Len != want.Len() {
				t.Fatalf("event %+v, want head %s len %d", ev, want.Head().Short(), want.Len())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s of a commit")
		}
	}
}

// nextEvent returns the next Watch event, failing after 10 s.
func nextEvent(t *testing.T, events <-chan store.Event) store.Event {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return store.Event{}
}

// A label write is reported by Watch: one event with Labels set, on the
// session written, with its head and length, sent once Info shows the
// write. Commits' events do not have Labels set; a refused label write
// reports nothing.
func testWatchLabels(t *testing.T, h Harness) {
	st := open(t, h)
	events, err := st.Watch(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s, other := session.FromUser("labelled"), session.FromUser("labelled too")
	mustCommit(t, st, s, "")
	mustCommit(t, st, other, "")
	s2 := s.Append(session.User("more"))
	mustCommit(t, st, s2, s.Head())
	for _, want := range []*session.Session{s, other, s2} {
		if ev := nextEvent(t, events); ev.Labels || ev.ID != want.ID() || ev.Len != want.Len() {
			t.Fatalf("event %+v, want the commit of %s at %d without Labels", ev, want.ID(), want.Len())
		}
	}
	// labelEvent takes the next event, which must report a label write on
	// want, and returns the labels Info shows on its receipt.
	labelEvent := func(want *session.Session) map[string]string {
		t.Helper()
		ev := nextEvent(t, events)
		if !ev.Labels || ev.Missed || ev.ID != want.ID() || ev.Head != want.Head() || ev.Len != want.Len() {
			t.Fatalf("event %+v, want a label write on %s at head %s, len %d", ev, want.ID(), want.Head().Short(), want.Len())
		}
		info, err := st.Info(ctx(t), ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		return info.Labels
	}
	if err := st.SetLabel(store.WithLabelEvents(ctx(t)), s.ID(), "state", "running"); err != nil {
		t.Fatal(err)
	}
	if got := labelEvent(s2); got["state"] != "running" {
		t.Fatalf("labels on receipt of SetLabel's event = %v, want state=running", got)
	}
	if err := st.SetLabels(store.WithLabelEvents(ctx(t)), other.ID(), map[string]string{"state": "queued", "kind": "run"}); err != nil {
		t.Fatal(err)
	}
	if got := labelEvent(other); !maps.Equal(got, map[string]string{"state": "queued", "kind": "run"}) {
		t.Fatalf("labels on receipt of SetLabels' event = %v, want state=queued, kind=run", got)
	}
	if err := st.SetLabels(store.WithLabelEvents(ctx(t)), s.ID(), map[string]string{"state": "", "owner": "w1"}); err != nil {
		t.Fatal(err)
	}
	if got := labelEvent(s2); !maps.Equal(got, map[string]string{"owner": "w1"}) {
		t.Fatalf("labels on receipt of a removal's event = %v, want only owner=w1", got)
	}

	// Refused label writes (an unknown session, a superseded fence)
	// report nothing: the next event is the commit after them.
	if err := st.SetLabel(store.WithLabelEvents(ctx(t)), session.NewID(), "state", "lost"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("labelling an unknown session: %v", err)
	}
	e, err := st.Advance(ctx(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	stale := store.WithFence(ctx(t), store.Fence{Session: s.ID(), Epoch: e - 1})
	if err := st.SetLabel(stale, s.ID(), "state", "stolen"); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("labelling under a superseded fence: %v", err)
	}
	s3 := s2.Append(session.User("after the refusals"))
	mustCommit(t, st, s3, s2.Head())
	if ev := nextEvent(t, events); ev.Labels || ev.ID != s3.ID() || ev.Head != s3.Head() || ev.Len != s3.Len() {
		t.Fatalf("event %+v, want the commit of %s at %d (a refused label write reported?)", ev, s3.Head().Short(), s3.Len())
	}
}

func testNotFound(t *testing.T, h Harness) {
	st := open(t, h)
	id := session.NewID()
	if _, err := st.Load(ctx(t), id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Load: %v", err)
	}
	if _, err := st.Info(ctx(t), id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Info: %v", err)
	}
	if _, err := st.Tail(ctx(t), id, 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Tail: %v", err)
	}
	if err := st.Verify(ctx(t), id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Verify: %v", err)
	}
}
