package memorytest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/session"
)

// RunShared runs the cases of two handles on one backend — as two
// processes of a cluster hold — racing each other. open returns two
// handles, each with its own connections, on one fresh, empty memory.
func RunShared(t *testing.T, open func(t *testing.T) (a, b memory.Memory)) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, a, b memory.Memory)
	}{
		{"ConcurrentWritersLoseNothing", testConcurrentWriters},
		{"ConcurrentReplacesKeepOne", testConcurrentReplaces},
		{"RollbackRacingWriters", testRollbackRacing},
		{"WritesSeenByTheOther", testSeenByOther},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := open(t)
			t.Cleanup(func() { a.Close(); b.Close() })
			c.fn(t, a, b)
		})
	}
}

// race runs fn(handle, i) for i in [0, n) on goroutines split between the
// two handles, and fails the test on any error.
func race(t *testing.T, a, b memory.Memory, n int, fn func(m memory.Memory, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		m := a
		if i%2 == 1 {
			m = b
		}
		wg.Go(func() {
			if err := fn(m, i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// testConcurrentWriters: 64 writers on two handles, each writing its own
// entries; every one of them is there afterwards, from either handle.
func testConcurrentWriters(t *testing.T, a, b memory.Memory) {
	const writers, each = 16, 4
	race(t, a, b, writers, func(m memory.Memory, i int) error {
		s := session.FromUser(fmt.Sprint("writer ", i))
		for j := range each {
			var err error
			s, err = m.Remember(ctx, s, memory.Entry{URI: memory.URI{Scope: memory.ScopeProject, ScopeID: "shared", Path: fmt.Sprintf("w%d/%d", i, j)},
				Content: fmt.Sprintf("note %d of writer %d about kestrels", j, i)})
			if err != nil {
				return err
			}
		}
		return nil
	})
	for _, m := range []memory.Memory{a, b} {
		es, err := m.List(ctx, "memory://project/shared/")
		if err != nil || len(es) != writers*each {
			t.Fatalf("%d entries after %d writes, %v", len(es), writers*each, err)
		}
	}
	hits, _, err := b.Recall(ctx, nil, memory.Query{Text: "kestrels", Scopes: []string{"project/shared"}, K: 100})
	if err != nil || len(hits) != writers*each {
		t.Fatalf("recall found %d of %d, %v", len(hits), writers*each, err)
	}
}

// testConcurrentReplaces: writers on both handles replace one URI; one
// entry remains, holding one writer's content whole, and a recall finds
// it by that content only.
func testConcurrentReplaces(t *testing.T, a, b memory.Memory) {
	u := memory.MustParseURI("memory://project/shared/contended")
	const n = 24
	sessions := make([]*session.Session, n)
	for i := range sessions {
		sessions[i] = session.FromUser(fmt.Sprint("replacer ", i))
	}
	race(t, a, b, n, func(m memory.Memory, i int) error {
		_, err := m.Remember(ctx, sessions[i], memory.Entry{URI: u, Content: fmt.Sprintf("version%d wins", i)})
		return err
	})
	var contents []string
	for _, m := range []memory.Memory{a, b} {
		es, err := m.List(ctx, "memory://project/shared/")
		if err != nil || len(es) != 1 {
			t.Fatalf("%d entries at one URI, %v", len(es), err)
		}
		contents = append(contents, es[0].Content)
	}
	if contents[0] != contents[1] {
		t.Fatalf("the handles disagree: %q vs %q", contents[0], contents[1])
	}
	var winner int
	if _, err := fmt.Sscanf(contents[0], "version%d wins", &winner); err != nil || winner < 0 || winner >= n {
		t.Fatalf("content %q is no writer's", contents[0])
	}
	e, _ := a.Get(ctx, u)
	if e.Provenance.Session != sessions[winner].ID() {
		t.Fatalf("content of writer %d with the provenance of session %s", winner, e.Provenance.Session)
	}
	// No recall returns a loser's content; the winner's is found by its
	// word. (A hybrid recall may also find the winner by similarity.)
	for i := range n {
		hits, _, err := b.Recall(ctx, nil, memory.Query{Text: fmt.Sprintf("version%d", i), Scopes: []string{"project/shared"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Content != contents[0] {
				t.Fatalf("recall of version%d returned %q, not the entry's content %q", i, h.Content, contents[0])
			}
		}
		if i == winner && len(hits) != 1 {
			t.Fatalf("recall of the winner's version%d found %d", i, len(hits))
		}
	}
}

// testRollbackRacing: one run's writes are rolled back from one handle
// while other runs write through the other; exactly the run's entries go.
func testRollbackRacing(t *testing.T, a, b memory.Memory) {
	run := session.FromUser("the run rolled back")
	s := run
	for j := range 10 {
		var err error
		if s, err = a.Remember(ctx, s, memory.Entry{URI: memory.URI{Scope: memory.ScopeProject, ScopeID: "shared", Path: fmt.Sprint("run/", j)},
			Content: "written by the run"}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var forgot int
	var ferr error
	wg.Go(func() { forgot, _, ferr = a.Forget(ctx, s, memory.DerivedFrom(run.ID())) })
	others := session.FromUser("other runs")
	for j := range 10 {
		wg.Go(func() {
			if _, err := b.Remember(ctx, others, memory.Entry{URI: memory.URI{Scope: memory.ScopeProject, ScopeID: "shared", Path: fmt.Sprint("other/", j)},
				Content: "written by another run"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ferr != nil || forgot != 10 {
		t.Fatalf("rollback forgot %d, %v", forgot, ferr)
	}
	es, err := b.List(ctx, "memory://project/shared/")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range es {
		paths = append(paths, e.URI.Path)
	}
	want := make([]string, 10)
	for j := range want {
		want[j] = fmt.Sprint("other/", j)
	}
	slices.Sort(want)
	if !slices.Equal(paths, want) {
		t.Fatalf("left %v, want the other runs' %v", paths, want)
	}
}

// testSeenByOther: what one handle writes or forgets, the other sees at
// once.
func testSeenByOther(t *testing.T, a, b memory.Memory) {
	u := memory.MustParseURI("memory://user/ann/tea")
	if _, err := a.Remember(ctx, nil, memory.Entry{URI: u, Content: "Ann drinks oolong tea."}); err != nil {
		t.Fatal(err)
	}
	if hits, _, err := b.Recall(ctx, nil, memory.Query{Text: "oolong", Scopes: []string{"user/ann"}}); err != nil || len(hits) != 1 {
		t.Fatalf("the other handle recalled %+v, %v", hits, err)
	}
	if _, err := b.Remember(ctx, nil, memory.Entry{URI: u, Content: "Ann drinks sencha now."}); err != nil {
		t.Fatal(err)
	}
	if hits, _, _ := a.Recall(ctx, nil, memory.Query{Text: "oolong", Scopes: []string{"user/ann"}}); len(hits) != 0 {
		t.Fatalf("a replaced content still recalled: %+v", hits)
	}
	if hits, _, _ := a.Recall(ctx, nil, memory.Query{Text: "sencha", Scopes: []string{"user/ann"}}); len(hits) != 1 {
		t.Fatalf("the new content not recalled: %+v", hits)
	}
	if n, _, err := a.Forget(ctx, nil, memory.Selector{URI: u.String()}); err != nil || n != 1 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	if _, err := b.Get(ctx, u); err == nil {
		t.Fatal("the other handle still has a forgotten entry")
	}
}
