package storetest

import (
	"errors"
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
