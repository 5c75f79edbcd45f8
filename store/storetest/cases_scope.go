package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// testScopes: sessions created under a scope carry it from their first
// commit; forks are born in their parent's; unlabelled sessions are in
// DefaultScope; Filter.Scope lists and counts by tenant and project; a
// scoped view sees, names and changes only its own.
func testScopes(t *testing.T, h Harness) {
	st := open(t, h)
	acme := store.Scope{Tenant: "acme", Project: "web"}
	acmeAPI := store.Scope{Tenant: "acme", Project: "api"}
	globex := store.Scope{Tenant: "globex", Project: "web"}

	plain := session.FromUser("no scope")
	mustCommit(t, st, plain, "")
	a := session.FromUser("acme web")
	if err := st.Commit(store.WithCreateScope(ctx(t), acme), a, ""); err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx(t), a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := store.ScopeOf(info.Labels); got != acme {
		t.Fatalf("scope of a session created under %v: %v", acme, got)
	}
	fork := a.Fork().Append(session.User("more"))
	mustCommit(t, st, fork, "")
	if info, _ := st.Info(ctx(t), fork.ID()); store.ScopeOf(info.Labels) != acme {
		t.Fatalf("a fork is born in %v, not its parent's %v", store.ScopeOf(info.Labels), acme)
	}
	b := session.FromUser("acme api")
	if err := st.Commit(store.WithCreateScope(ctx(t), acmeAPI), b, ""); err != nil {
		t.Fatal(err)
	}
	g := session.FromUser("globex")
	if err := st.Commit(store.WithCreateScope(ctx(t), globex), g, ""); err != nil {
		t.Fatal(err)
	}

	list := func(sc store.Scope) []session.ID {
		t.Helper()
		infos, err := st.List(ctx(t), store.Filter{Scope: &sc})
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.Count(ctx(t), store.Filter{Scope: &sc})
		if err != nil || n != len(infos) {
			t.Fatalf("count %v = %d, %v; list has %d", sc, n, err, len(infos))
		}
		var out []session.ID
		for _, in := range infos {
			out = append(out, in.ID)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(ids ...session.ID) []session.ID { slices.Sort(ids); return ids }
	if got, want := list(acme), sorted(a.ID(), fork.ID()); !slices.Equal(got, want) {
		t.Fatalf("acme/web lists %v, want %v", got, want)
	}
	if got, want := list(store.Scope{Tenant: "acme"}), sorted(a.ID(), fork.ID(), b.ID()); !slices.Equal(got, want) {
		t.Fatalf("acme/* lists %v, want %v", got, want)
	}
	if got, want := list(store.Scope{Tenant: store.DefaultScope, Project: store.DefaultScope}), sorted(plain.ID()); !slices.Equal(got, want) {
		t.Fatalf("default/default lists %v, want %v", got, want)
	}
	if got := list(store.Scope{Tenant: "nobody"}); len(got) != 0 {
		t.Fatalf("an empty tenant lists %v", got)
	}

	v := store.Scoped(st, acme)
	if _, err := v.Load(ctx(t), g.ID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another tenant's session through a scoped view: %v", err)
	}
	if _, err := v.Info(ctx(t), b.ID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another project's session through a scoped view: %v", err)
	}
	if _, err := v.Tail(ctx(t), plain.ID(), 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unscoped session through acme's view: %v", err)
	}
	if err := v.SetLabel(ctx(t), g.ID(), "x", "y"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("labelling another tenant's session: %v", err)
	}
	if err := v.SetLabel(ctx(t), a.ID(), store.LabelTenant, "globex"); !errors.Is(err, store.ErrOutOfScope) {
		t.Fatalf("moving a session out of its scope: %v", err)
	}
	if kids, err := v.Children(ctx(t), a.ID()); err != nil || !slices.Equal(kids, []session.ID{fork.ID()}) {
		t.Fatalf("children through the view: %v %v", kids, err)
	}
	infos, err := v.List(ctx(t), store.Filter{Labels: map[string]string{store.LabelTenant: "globex"}})
	if err != nil || len(infos) != 0 {
		t.Fatalf("a view asked for another tenant's label lists %v %v", infos, err)
	}
	// A session created through the view is born in its scope; so is one
	// whose parent is another tenant's, as if the parent were not stored
	// (the answer tells nothing of it).
	n := session.FromUser("made through the view")
	if err := v.Commit(ctx(t), n, ""); err != nil {
		t.Fatal(err)
	}
	if info, _ := st.Info(ctx(t), n.ID()); store.ScopeOf(info.Labels) != acme {
		t.Fatalf("a session committed through acme's view is in %v", store.ScopeOf(info.Labels))
	}
	stolen := g.Fork().Append(session.User("mine now"))
	orphan, err := session.Assemble(session.NewID(), session.Lineage{Op: stolen.Lineage().Op, Parents: []session.ID{session.NewID()}}, stolen.Chunks())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*session.Session{stolen, orphan} {
		if err := v.Commit(ctx(t), s, ""); err != nil {
			t.Fatalf("a session whose parent is another tenant's or not stored, through a view: %v", err)
		}
		if info, _ := st.Info(ctx(t), s.ID()); store.ScopeOf(info.Labels) != acme {
			t.Fatalf("a session with a parent outside acme, committed through acme's view, is in %v", store.ScopeOf(info.Labels))
		}
	}
	gv := store.Scoped(st, store.ScopeOf(mustInfo(t, st, g.ID()).Labels))
	if kids, err := gv.Children(ctx(t), g.ID()); err != nil || len(kids) != 0 {
		t.Fatalf("globex's view lists acme's session among its session's children: %v %v", kids, err)
	}
}

func mustInfo(t *testing.T, st store.Store, id session.ID) store.Info {
	t.Helper()
	info, err := st.Info(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return info
}
