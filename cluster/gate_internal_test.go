package cluster

import (
	"sync/atomic"
	"testing"
	"time"
)

// A slice's first call always runs; later ones until the step budget, or
// until the time budget: SliceTime from the first call, or ten times the
// slice's start-up when that is longer; and none once the worker drains.
func TestGate(t *testing.T) {
	var drain atomic.Bool
	// A quick start: the time budget is SliceTime.
	g := newGate(time.Now(), 3, time.Hour, &drain)
	for i := range 3 {
		if !g.more() {
			t.Fatalf("call %d of a budget of 3 refused", i+1)
		}
	}
	if g.more() {
		t.Fatal("a fourth call ran past a step budget of 3")
	}
	// A slice whose SliceTime is spent yields at its second call...
	g = newGate(time.Now(), 100, time.Nanosecond, &drain)
	if !g.more() {
		t.Fatal("the first call was refused")
	}
	time.Sleep(time.Millisecond)
	if g.more() {
		t.Fatal("a second call ran past a spent SliceTime after a quick start-up")
	}
	// ...unless it took long to start: it works ten times its start-up.
	g = newGate(time.Now().Add(-time.Hour), 100, time.Nanosecond, &drain)
	for i := range 3 {
		if !g.more() {
			t.Fatalf("a slice that took an hour to start yielded at call %d", i+1)
		}
	}
	drain.Store(true)
	if g.more() {
		t.Fatal("a call ran on a draining worker")
	}
}
