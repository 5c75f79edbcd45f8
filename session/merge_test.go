package session

import (
	"errors"
	"fmt"
	"testing"
)

func TestMergeIsPrefixPlusBothSuffixes(t *testing.T) {
	base := FromUser("task").Append(Assistant("plan"))
	a := base.Fork().Append(User("a1"), Assistant("a2"))
	b := base.Fork().Append(User("b1"), Assistant("b2"), Note("b3"))
	m, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 2+2+3 {
		t.Fatalf("merged length %d, want 7", m.Len())
	}
	for i := range 4 {
		if m.Chunk(i).ID != a.Chunk(i).ID {
			t.Fatalf("chunk %d: prefix and our suffix must keep their ids", i)
		}
	}
	for i := range 3 {
		got, orig := m.Chunk(4+i), b.Chunk(2+i)
		if got.Origin != orig.ID || got.ID == orig.ID || got.Text() != orig.Text() {
			t.Fatalf("their chunk %d: origin %s id %s, want re-chained from %s", i, got.Origin.Short(), got.ID.Short(), orig.ID.Short())
		}
	}
	l := m.Lineage()
	if l.Kind != LineageMerge || len(l.Parents) != 2 || l.Parents[0] != a.ID() || l.Parents[1] != b.ID() {
		t.Fatalf("lineage %+v", l)
	}
	if l.Extras["common_prefix"] != "2" || l.Extras["ours"] != "2" || l.Extras["theirs"] != "3" {
		t.Fatalf("extras %v", l.Extras)
	}
	if m.ID() == a.ID() || m.ID() == b.ID() {
		t.Fatal("merge reused a parent's id")
	}
	if err := m.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestMergeCountsSharedUsageOnce(t *testing.T) {
	call := Of(&ModelCall{Provider: "p", Model: "m", Usage: Usage{InputTokens: 100, OutputTokens: 10}})
	base := FromUser("q").Append(call)
	a := base.Fork().Append(Of(&ModelCall{Provider: "p", Model: "m", Usage: Usage{InputTokens: 1}}))
	b := base.Fork().Append(Of(&ModelCall{Provider: "p", Model: "m", Usage: Usage{InputTokens: 2}}))
	m, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	if u := m.Usage(); u.InputTokens != 103 || u.OutputTokens != 10 {
		t.Fatalf("merged usage %+v, want 103 in / 10 out", u)
	}
}

func TestMergeFastForwardAndSubset(t *testing.T) {
	base := FromUser("q")
	ahead := base.Fork().Append(Assistant("a"), User("b"))
	ff, err := base.Merge(ahead)
	if err != nil {
		t.Fatal(err)
	}
	if ff.Head() != ahead.Head() || ff.Len() != 3 || ff.Chunk(2).Origin != "" {
		t.Fatal("merging a descendant should fast-forward to its chunks unchanged")
	}
	sub, err := ahead.Merge(base)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Head() != ahead.Head() || sub.Len() != 3 {
		t.Fatal("merging an ancestor should add nothing")
	}
	self, err := ahead.Merge(ahead)
	if err != nil || self.Len() != 3 {
		t.Fatalf("self merge: %v len %d", err, self.Len())
	}
}

func TestMergeUnrelatedSessions(t *testing.T) {
	a, b := FromUser("a"), FromUser("b")
	m, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 2 || m.Lineage().Extras["common_prefix"] != "0" || m.Chunk(1).Origin != b.Head() {
		t.Fatalf("unrelated merge: len %d extras %v", m.Len(), m.Lineage().Extras)
	}
	if err := m.Verify(); err != nil {
		t.Fatal(err)
	}
	if empty, err := New().Merge(New()); err != nil || empty.Len() != 0 {
		t.Fatalf("empty merge: %v", err)
	}
}

func TestMergePlacements(t *testing.T) {
	base := FromUser("q")
	local := base.Fork().To("local", Spec{Dir: "w"})
	docker := base.Fork().To("docker", Spec{Image: "busybox"})
	if _, err := local.Merge(docker); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("merge across backends err = %v, want ErrIncompatible", err)
	}
	ours, err := local.Merge(docker, KeepPlacement(Ours))
	if err != nil {
		t.Fatal(err)
	}
	if p := ours.Placement(); p.Backend != "local" {
		t.Fatalf("KeepPlacement(Ours) placed on %q", p.Backend)
	}
	if last, _ := ours.Last(); last.Kind != KindPlacement {
		t.Fatal("the winning placement was not restated at the end")
	}
	theirs, err := local.Merge(docker, KeepPlacement(Theirs))
	if err != nil || theirs.Placement().Backend != "docker" {
		t.Fatalf("KeepPlacement(Theirs): %v %+v", err, theirs.Placement())
	}
	// Same backend and spec, different sandboxes (forked workspaces): compatible, ours wins.
	p1 := base.Append(Of(&Placement{Backend: "local", Spec: Spec{Dir: "w"}, SandboxID: "sb1"}))
	p2 := p1.Fork().Append(Of(&Placement{Backend: "local", Spec: Spec{Dir: "w"}, SandboxID: "sb2"}))
	p1b := p1.Append(User("more"))
	m, err := p1b.Merge(p2)
	if err != nil || m.Placement().SandboxID != "sb1" {
		t.Fatalf("compatible merge: %v, sandbox %q", err, m.Placement().SandboxID)
	}
	// Unplaced merges with placed: no conflict.
	if m, err := base.Fork().Append(User("x")).Merge(local); err != nil || m.Placement().Backend != "local" {
		t.Fatalf("unplaced+placed: %v", err)
	}
}

func TestMergeCostIndependentOfPrefix(t *testing.T) {
	// Not a timing test: count the chunks Merge hashes, through the trie's
	// allocation of new entries, by checking the merged prefix shares entries.
	base := build(t, 5000)
	a := base.Fork().Append(User("a"))
	b := base.Fork().Append(User("b"))
	m, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1234, 4999} {
		if m.t.get(i) != base.t.get(i) {
			t.Fatalf("merged chunk %d is a copy, not shared", i)
		}
	}
	if got := fmt.Sprint(m.Lineage().Extras["common_prefix"]); got != "5000" {
		t.Fatalf("common prefix %s", got)
	}
}
