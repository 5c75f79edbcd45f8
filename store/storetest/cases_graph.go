package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

func sortedIDs(xs []session.ID) []session.ID { xs = slices.Clone(xs); slices.Sort(xs); return xs }

func testLineage(t *testing.T, h Harness) {
	st := open(t, h)
	root := grow(session.FromUser("root"), 4, "r")
	a := root.Fork().Append(session.User("a"))
	b := root.Fork().Append(session.User("b"))
	m, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Derive("agent:coder", map[string]string{"model": "m"}).Append(session.Assistant("done"))
	for _, s := range []*session.Session{root, a, b, m, d} {
		mustCommit(t, st, s, "")
	}
	check := func(name string, got []session.ID, err error, want ...session.ID) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s = %v, want %v", name, got, want)
		}
	}
	got, err := st.Parents(ctx(t), m.ID())
	check("Parents(merge)", got, err, a.ID(), b.ID()) // in lineage order
	got, err = st.Children(ctx(t), root.ID())
	check("Children(root)", sortedIDs(got), err, sortedIDs([]session.ID{a.ID(), b.ID()})...)
	got, err = st.Ancestors(ctx(t), d.ID())
	if err != nil || len(got) != 4 || got[0] != m.ID() || got[3] != root.ID() {
		t.Fatalf("Ancestors(derived) = %v, %v; want merge first, root last", got, err)
	}
	got, err = st.Descendants(ctx(t), root.ID())
	if err != nil || len(got) != 4 || got[3] != d.ID() || !slices.Contains(got, m.ID()) {
		t.Fatalf("Descendants(root) = %v, %v", got, err)
	}
	got, err = st.Parents(ctx(t), root.ID())
	check("Parents(root)", got, err)
	info, err := st.Info(ctx(t), d.ID())
	if err != nil || info.Lineage.Op != "agent:coder" || info.Lineage.Extras["model"] != "m" {
		t.Fatalf("stored lineage %+v, %v", info.Lineage, err)
	}
}

func testList(t *testing.T, h Harness) {
	st := open(t, h)
	root := session.FromUser("root")
	mustCommit(t, st, root, "")
	time.Sleep(2 * time.Millisecond) // distinct creation times
	mid := time.Now()
	f1 := root.Fork().Append(session.User("f1"))
	f2 := root.Fork().Append(session.User("f2"))
	other := session.FromUser("other")
	for _, s := range []*session.Session{f1, f2, other} {
		mustCommit(t, st, s, "")
	}
	if err := st.SetStatus(ctx(t), f1.ID(), store.StatusActive); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLabel(ctx(t), f2.ID(), "team", "infra"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		f    store.Filter
		want []session.ID
	}{
		{"all", store.Filter{}, []session.ID{root.ID(), f1.ID(), f2.ID(), other.ID()}},
		{"status", store.Filter{Status: []store.Status{store.StatusActive}}, []session.ID{f1.ID()}},
		{"op", store.Filter{Op: "fork"}, []session.ID{f1.ID(), f2.ID()}},
		{"parent", store.Filter{Parent: root.ID()}, []session.ID{f1.ID(), f2.ID()}},
		{"label", store.Filter{Labels: map[string]string{"team": "infra"}}, []session.ID{f2.ID()}},
		{"since", store.Filter{Since: mid}, []session.ID{f1.ID(), f2.ID(), other.ID()}},
		{"until", store.Filter{Until: mid}, []session.ID{root.ID()}},
	}
	for _, tc := range cases {
		got, err := st.List(ctx(t), tc.f)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var gotIDs []session.ID
		for _, in := range got {
			gotIDs = append(gotIDs, in.ID)
		}
		if !slices.Equal(sortedIDs(gotIDs), sortedIDs(tc.want)) {
			t.Fatalf("List(%s) = %v, want %v", tc.name, gotIDs, tc.want)
		}
	}
	got, err := st.List(ctx(t), store.Filter{Limit: 2})
	if err != nil || len(got) != 2 || got[0].Created.Before(got[1].Created) {
		t.Fatalf("List(limit 2) = %v, %v; want the 2 newest, newest first", got, err)
	}
	info, err := st.Info(ctx(t), f2.ID())
	if err != nil || info.Labels["team"] != "infra" {
		t.Fatalf("labels %v, %v", info.Labels, err)
	}
	if err := st.SetLabel(ctx(t), f2.ID(), "team", ""); err != nil {
		t.Fatal(err)
	}
	if info, _ := st.Info(ctx(t), f2.ID()); len(info.Labels) != 0 {
		t.Fatalf("label not removed: %v", info.Labels)
	}
}

func testLifecycle(t *testing.T, h Harness) {
	st := open(t, h)
	s := session.FromUser("q")
	mustCommit(t, st, s, "")
	steps := []struct {
		to Status
		ok bool
	}{
		{store.StatusClosed, false}, // open -> closed skips active
		{store.StatusActive, true},
		{store.StatusPaused, true},
		{store.StatusActive, true},
		{store.StatusOpen, false},
		{store.StatusClosed, true},
		{store.StatusActive, false},
		{store.StatusArchived, true},
		{"exploded", false},
	}
	for _, step := range steps {
		err := st.SetStatus(ctx(t), s.ID(), step.to)
		if step.ok && err != nil {
			t.Fatalf("-> %s: %v", step.to, err)
		}
		if !step.ok && !errors.Is(err, store.ErrTransition) {
			t.Fatalf("-> %s: err = %v, want ErrTransition", step.to, err)
		}
	}
	if info, _ := st.Info(ctx(t), s.ID()); info.Status != store.StatusArchived {
		t.Fatalf("status %s, want archived", info.Status)
	}
	f := session.FromUser("f")
	mustCommit(t, st, f, "")
	if err := st.SetStatus(ctx(t), f.ID(), store.StatusFailed); err != nil {
		t.Fatalf("open -> failed: %v", err)
	}
	for _, step := range []struct {
		to Status
		ok bool
	}{
		{store.StatusClosed, false}, // a failed session closes only once reopened
		{store.StatusPaused, false},
		{store.StatusOpen, false},
		{store.StatusActive, true}, // reopened: its run was resumed
		{store.StatusFailed, true},
		{store.StatusArchived, true},
		{store.StatusActive, false},
	} {
		err := st.SetStatus(ctx(t), f.ID(), step.to)
		if step.ok && err != nil {
			t.Fatalf("failed session -> %s: %v", step.to, err)
		}
		if !step.ok && !errors.Is(err, store.ErrTransition) {
			t.Fatalf("failed session -> %s: err = %v, want ErrTransition", step.to, err)
		}
	}
	if err := st.SetStatus(ctx(t), "ses_00000000000000000000000000", store.StatusActive); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown session: err = %v", err)
	}
}

// Status is a local alias so the step table reads naturally.
type Status = store.Status
