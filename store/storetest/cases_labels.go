package storetest

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// testSetLabels: several labels set in one call, an empty value removing
// one, listing by them, a fenced-out writer changing none, an unknown
// session refused.
func testSetLabels(t *testing.T, h Harness) {
	st := open(t, h)
	s := session.FromUser("labelled")
	mustCommit(t, st, s, "")
	if err := st.SetLabels(ctx(t), s.ID(), map[string]string{"a": "1", "b": "2", "c": "3"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabels(ctx(t), s.ID(), map[string]string{"a": "one", "b": ""}); err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "one", "c": "3"}; !maps.Equal(info.Labels, want) {
		t.Fatalf("labels = %v, want %v", info.Labels, want)
	}
	found, err := st.List(ctx(t), store.Filter{Labels: map[string]string{"a": "one", "c": "3"}})
	if err != nil || len(found) != 1 || found[0].ID != s.ID() {
		t.Fatalf("list by labels: %v %v", found, err)
	}
	e1, err := st.Advance(ctx(t), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	old := store.WithFence(ctx(t), store.Fence{Session: s.ID(), Epoch: e1})
	if _, err := st.Advance(ctx(t), s.ID()); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabels(old, s.ID(), map[string]string{"a": "zombie", "d": "4"}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("a fenced-out SetLabels: %v", err)
	}
	if info, _ := st.Info(ctx(t), s.ID()); info.Labels["a"] != "one" || info.Labels["d"] != "" {
		t.Fatalf("a fenced-out SetLabels changed labels: %v", info.Labels)
	}
	if err := st.SetLabels(ctx(t), session.NewID(), map[string]string{"a": "1"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("labels of an unknown session: %v", err)
	}
}

// Long label values (a record, a list of ids) are kept whole and found by
// value like short ones, beside sessions whose value differs only late.
func testLongLabels(t *testing.T, h Harness) {
	st := open(t, h)
	long := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	a, b := session.FromUser("long a"), session.FromUser("long b")
	mustCommit(t, st, a, "")
	mustCommit(t, st, b, "")
	if err := st.SetLabels(ctx(t), a.ID(), map[string]string{"record": long, "state": "queued"}); err != nil {
		t.Fatalf("a 64 KiB label: %v", err)
	}
	if err := st.SetLabel(ctx(t), b.ID(), "record", long+"!"); err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx(t), a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if info.Labels["record"] != long {
		t.Fatalf("the long label came back with %d bytes, want %d", len(info.Labels["record"]), len(long))
	}
	found, err := st.List(ctx(t), store.Filter{Labels: map[string]string{"record": long}})
	if err != nil || len(found) != 1 || found[0].ID != a.ID() {
		t.Fatalf("list by a long label: %d found, %v; want only %s", len(found), err, a.ID())
	}
	found, err = st.List(ctx(t), store.Filter{Labels: map[string]string{"state": "queued"}})
	if err != nil || len(found) != 1 || found[0].ID != a.ID() {
		t.Fatalf("list by a short label beside a long one: %d found, %v", len(found), err)
	}
}

// MoveTo passes an open session through active, leaves one already there
// alone, refuses a move the lifecycle does not allow, and honours a fence.
func testMoveTo(t *testing.T, h Harness) {
	st := open(t, h)
	s := session.FromUser("moved")
	mustCommit(t, st, s, "")
	statusIs := func(want store.Status) {
		t.Helper()
		if info, err := st.Info(ctx(t), s.ID()); err != nil || info.Status != want {
			t.Fatalf("status = %s, %v; want %s", info.Status, err, want)
		}
	}
	if err := store.MoveTo(ctx(t), st, s.ID(), store.StatusClosed); err != nil {
		t.Fatalf("open -> closed: %v", err)
	}
	statusIs(store.StatusClosed)
	if err := store.MoveTo(ctx(t), st, s.ID(), store.StatusClosed); err != nil {
		t.Fatalf("closed -> closed: %v", err)
	}
	if err := store.MoveTo(ctx(t), st, s.ID(), store.StatusActive); !errors.Is(err, store.ErrTransition) {
		t.Fatalf("closed -> active: %v, want ErrTransition", err)
	}
	statusIs(store.StatusClosed)
	if err := store.MoveTo(ctx(t), st, session.NewID(), store.StatusClosed); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("moving an unknown session: %v, want ErrNotFound", err)
	}

	r := session.FromUser("moved under a fence")
	mustCommit(t, st, r, "")
	e1 := mustAdvance(t, st, r.ID(), 1)
	mustAdvance(t, st, r.ID(), 2)
	isFenced(t, "MoveTo", store.MoveTo(fenced(t, r.ID(), e1), st, r.ID(), store.StatusFailed))
	if err := store.MoveTo(fenced(t, r.ID(), 2), st, r.ID(), store.StatusFailed); err != nil {
		t.Fatalf("MoveTo under the current fence: %v", err)
	}
	if info, _ := st.Info(ctx(t), r.ID()); info.Status != store.StatusFailed {
		t.Fatalf("status under the current fence = %s, want failed", info.Status)
	}
	// A failed run resumed: its session is active again, under the fence
	// of whoever took it back.
	isFenced(t, "MoveTo (reopen)", store.MoveTo(fenced(t, r.ID(), e1), st, r.ID(), store.StatusActive))
	if err := store.MoveTo(fenced(t, r.ID(), 2), st, r.ID(), store.StatusActive); err != nil {
		t.Fatalf("failed -> active under the current fence: %v", err)
	}
	if err := store.MoveTo(ctx(t), st, r.ID(), store.StatusClosed); err != nil {
		t.Fatalf("reopened -> closed: %v", err)
	}
	if info, _ := st.Info(ctx(t), r.ID()); info.Status != store.StatusClosed {
		t.Fatalf("status after reopening and closing = %s, want closed", info.Status)
	}
}

// Count agrees with List, without its limit.
func testCount(t *testing.T, h Harness) {
	st := open(t, h)
	for i := range 5 {
		s := session.FromUser(fmt.Sprint("counted ", i))
		mustCommit(t, st, s, "")
		state := "queued"
		if i%2 == 1 {
			state = "running"
		}
		if err := st.SetLabels(ctx(t), s.ID(), map[string]string{"kind": "run", "state": state}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		f    store.Filter
		want int
	}{
		{store.Filter{Labels: map[string]string{"kind": "run"}}, 5},
		{store.Filter{Labels: map[string]string{"kind": "run", "state": "queued"}}, 3},
		{store.Filter{Labels: map[string]string{"kind": "run", "state": "running"}, Limit: 1}, 2},
		{store.Filter{Labels: map[string]string{"kind": "nothing"}}, 0},
		{store.Filter{Status: []store.Status{store.StatusOpen}, Labels: map[string]string{"state": "queued"}}, 3},
	} {
		n, err := st.Count(ctx(t), c.f)
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("Count(%+v) = %d, want %d", c.f, n, c.want)
		}
	}
}
