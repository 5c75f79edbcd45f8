package replay

import (
	"fmt"
	"testing"

	"github.com/openrath/rath/session"
)

func id(n int) session.ChunkID { return session.ChunkID(fmt.Sprintf("sha256:%064d", n)) }

// Lookups in record order go by the hint, others by the index; an origin
// re-chained twice gives its first copy, an unknown one nothing.
func TestRechainedLookups(t *testing.T) {
	tp := &tape{}
	tp.rechains.listed.Do(func() {}) // listed here, not from a record
	for i, o := range []int{1, 2, 3, 4, 2} {
		tp.rechains.add(session.Chunk{Origin: id(o), Parent: id(100 + i), ID: id(200 + i)})
	}
	tp.rechains.add(session.Chunk{ID: id(300)}) // not re-chained: not noted
	check := func(origin, parent, want int, ok bool) {
		t.Helper()
		p, got, found := tp.Rechained(id(origin))
		if found != ok || (ok && (p != id(parent) || got != id(want))) {
			t.Fatalf("Rechained(%d) = %s %s %v, want %d %d %v", origin, p.Short(), got.Short(), found, parent, want, ok)
		}
	}
	check(1, 100, 200, true)
	check(2, 101, 201, true)
	if tp.rechains.index != nil {
		t.Fatal("lookups in record order built the index")
	}
	check(4, 103, 203, true) // out of order
	check(3, 102, 202, true)
	check(2, 101, 201, true) // the first copy
	check(300, 0, 0, false)
	check(9, 0, 0, false)
}
