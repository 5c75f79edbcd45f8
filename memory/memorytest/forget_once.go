package memorytest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// testForgetOnce: a forget made again through the same session at the
// same point — a resumed step whose attempt deleted, then was cut before
// recording it — records what the first one forgot and deletes nothing
// more; through a resumed step's session it is the attempt's forget. A
// forget further on deletes anew.
func testForgetOnce(t *testing.T, m memory.Memory) {
	ctx := runctx.WithRun(ctx, session.NewID(), nil) // a step of a run
	writer := session.FromUser("the writer")
	if _, err := m.Remember(ctx, writer, memory.Entry{URI: uri(t, "memory://project/p/a"), Content: "first"}); err != nil {
		t.Fatal(err)
	}
	step := session.FromUser("a run").Derive("agent:a#1", nil)
	n, done, err := m.Forget(ctx, step, memory.DerivedFrom(writer.ID()))
	if err != nil || n != 1 {
		t.Fatalf("the first forget: %d, %v", n, err)
	}
	first := done.Chunk(done.Len() - 1).Memory
	// The writer writes again; the step's forget, made again, is the one
	// it made: the new entry stays.
	if _, err := m.Remember(ctx, writer, memory.Entry{URI: uri(t, "memory://project/p/b"), Content: "second"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var agains []*session.MemoryEvent
	for range 3 {
		wg.Go(func() {
			n, again, err := m.Forget(ctx, step, memory.DerivedFrom(writer.ID()))
			if err != nil || n != 1 {
				t.Errorf("the forget made again: %d, %v; want 1", n, err)
				return
			}
			mu.Lock()
			agains = append(agains, again.Chunk(again.Len()-1).Memory)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, a := range agains {
		if a.Count != first.Count || !slices.Equal(a.Forgotten, first.Forgotten) {
			t.Fatalf("the forget made again recorded %+v, the first %+v", a, first)
		}
	}
	if _, err := m.Get(ctx, uri(t, "memory://project/p/b")); err != nil {
		t.Fatalf("the forget made again deleted an entry written since: %v", err)
	}
	// A resumed step's session makes its attempt's forget.
	resumed := session.FromUser("a run").Derive("agent:a#1", session.ResumesExtras([]session.ID{step.ID()}))
	if n, _, err := m.Forget(ctx, resumed, memory.DerivedFrom(writer.ID())); err != nil || n != 1 {
		t.Fatalf("the resumed step's forget: %d, %v; want the attempt's 1", n, err)
	}
	// Further on, a forget deletes anew.
	if n, _, err := m.Forget(ctx, done, memory.DerivedFrom(writer.ID())); err != nil || n != 1 {
		t.Fatalf("a later forget: %d, %v; want 1", n, err)
	}
	if _, err := m.Get(ctx, uri(t, "memory://project/p/b")); err == nil {
		t.Fatal("a later forget left the entry")
	}
	// Outside a run, every forget deletes.
	if _, err := m.Remember(ctx, writer, memory.Entry{URI: uri(t, "memory://project/p/c"), Content: "third"}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := m.Forget(context.Background(), step, memory.DerivedFrom(writer.ID())); err != nil || n != 1 {
		t.Fatalf("a forget outside a run through the step's session: %d, %v; want 1", n, err)
	}
}
