package storetest

import (
	"errors"
	"maps"
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
