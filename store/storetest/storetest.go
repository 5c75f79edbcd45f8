// Package storetest is the conformance suite every store backend runs:
// storetest.Run(t, harness) checks the semantics store.Store promises.
package storetest

import (
	"context"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Harness gives the suite access to one fresh, empty store.
type Harness struct {
	// Open opens the store under test. Called again after Close, it must
	// reopen the same data.
	Open func(t *testing.T) store.Store
	// Tamper changes the stored content of chunk index i of session id
	// behind the store's back (a raw database edit), so the suite can check
	// that Verify notices.
	Tamper func(t *testing.T, id session.ID, i int)
}

// Run runs the conformance suite. newHarness is called once per subtest and
// must return a harness over a new, empty store.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"CommitAndLoad", testCommitAndLoad},
		{"CommitIsIdempotent", testIdempotent},
		{"AppendCommits", testAppend},
		{"Conflicts", testConflicts},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ManySessionsAtOnce", testManySessions},
		{"ForksSharePrefix", testForksSharePrefix},
		{"TailAndRange", testTailAndRange},
		{"Lineage", testLineage},
		{"List", testList},
		{"Lifecycle", testLifecycle},
		{"GCKeepsSharedChunks", testGC},
		{"ReopenKeepsEverything", testReopen},
		{"VerifyCatchesTampering", testVerify},
		{"Watch", testWatch},
		{"WatchLabels", testWatchLabels},
		{"NotFound", testNotFound},
		{"SetLabels", testSetLabels},
		{"LongLabels", testLongLabels},
		{"MoveTo", testMoveTo},
		{"Count", testCount},
		{"FenceEpochs", testFenceEpochs},
		{"FencedCommit", testFencedCommit},
		{"FenceRace", testFenceRace},
		{"AdvanceFrom", testAdvanceFrom},
		{"Scopes", testScopes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.fn(t, h)
		})
	}
}

func open(t *testing.T, h Harness) store.Store {
	t.Helper()
	s := h.Open(t)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ctx(t *testing.T) context.Context { return t.Context() }
