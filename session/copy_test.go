package session

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// A copy is what appending the chunk without its place in the chain gives,
// for chunks of every kind, merged ones (whose Origin goes) included.
func TestAppendCopyIsTheStrippedAppend(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	bs := branches(rng, FromUser("base"), 30)
	src, err := bs[0].MergeAll(bs[1:], KeepPlacement(Ours))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]bool{}
	for k := Kind(1); k < numKinds; k++ {
		for range 50 { // the valid ones of random chunks of each kind
			if next, err := src.TryAppend(stripped(randomChunkOfKind(rng, k))); err == nil {
				src, kinds[k] = next, true
			}
		}
	}
	if len(kinds) < int(numKinds)/2 {
		t.Fatalf("valid random chunks of only %d kinds", len(kinds))
	}
	copies := FromUser("other")
	appends := copies
	for i := range src.Len() {
		if copies, err = copies.AppendCopy(src, i); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if appends, err = appends.TryAppend(stripped(src.Chunk(i))); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if copies.Head() != appends.Head() {
			t.Fatalf("chunk %d (%s): the copy's id %s, the append's %s", i, src.Chunk(i).Kind, copies.Head().Short(), appends.Head().Short())
		}
	}
	if copies.Usage() != appends.Usage() || !samePlacement(copies.Placement(), appends.Placement()) {
		t.Fatalf("usage %+v placement %+v; the appends give %+v %+v", copies.Usage(), copies.Placement(), appends.Usage(), appends.Placement())
	}
	if err := copies.Verify(); err != nil {
		t.Fatal(err)
	}
	if _, err := copies.AppendCopy(src, src.Len()); !errors.Is(err, ErrRange) {
		t.Fatalf("copy past the end: %v", err)
	}
}

func stripped(c Chunk) Chunk {
	c.ID, c.Parent, c.Origin = "", "", ""
	return c
}
