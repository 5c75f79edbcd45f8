package session

import (
	"math/rand/v2"
	"testing"
)

// recordOf is the Rechained lookup over a merged session's re-chained
// chunks, counting the lookups that found one.
func recordOf(s *Session, found *int) Rechained {
	m := map[ChunkID][2]ChunkID{}
	for _, c := range s.All() {
		if c.Origin != "" {
			m[c.Origin] = [2]ChunkID{c.Parent, c.ID}
		}
	}
	return func(origin ChunkID) (ChunkID, ChunkID, bool) {
		r, ok := m[origin]
		if ok {
			*found++
		}
		return r[0], r[1], ok
	}
}

// A merge given the record of the same merge gives the same chain, with
// every re-chained chunk found in the record.
func TestMergeRecordedRepeatsTheRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 60 {
		bs := branches(rng, FromUser("base"), rng.IntN(40)+2)
		rec, err := bs[0].MergeAll(bs[1:], KeepPlacement(Ours))
		if err != nil {
			t.Fatal(err)
		}
		rechained := 0
		for _, c := range rec.All() {
			if c.Origin != "" {
				rechained++
			}
		}
		found := 0
		got, err := bs[0].MergeAll(bs[1:], KeepPlacement(Ours), Recorded(recordOf(rec, &found)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Head() != rec.Head() || got.Len() != rec.Len() {
			t.Fatalf("round %d: the recorded merge gives %d chunks head %s, the record %d head %s", round, got.Len(), got.Head().Short(), rec.Len(), rec.Head().Short())
		}
		if found != rechained {
			t.Fatalf("round %d: %d of %d re-chained chunks were looked up", round, found, rechained)
		}
		if err := got.Verify(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		// Merge, one step, takes the option too.
		found = 0
		one, err := bs[0].Merge(bs[1], KeepPlacement(Ours), Recorded(recordOf(rec, &found)))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := bs[0].Merge(bs[1], KeepPlacement(Ours))
		if one.Head() != want.Head() {
			t.Fatalf("round %d: Merge with a record gives head %s, without %s", round, one.Head().Short(), want.Head().Short())
		}
	}
}

// The record's id is taken only where the record shows the chunk on the
// same parent; elsewhere the chunk is hashed. Where it is taken it is not
// checked (the record is trusted as Assemble trusts stored ids): a forged
// id shows through, and Verify catches it.
func TestMergeRecordedOnlyOnTheRecordedParent(t *testing.T) {
	base := FromUser("base")
	a := base.Append(User("a1"), User("a2"))
	b := base.Append(User("b1"), User("b2"))
	want, err := a.Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	forged := ChunkID(chunkIDPrefix + "1111111111111111111111111111111111111111111111111111111111111111")
	elsewhere := Recorded(func(ChunkID) (ChunkID, ChunkID, bool) { return forged, forged, true })
	got, err := a.Merge(b, elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	if got.Head() != want.Head() {
		t.Fatalf("a record on another parent was used: head %s, want %s", got.Head().Short(), want.Head().Short())
	}
	first := want.Chunk(3) // b1 re-chained after a2
	taken := Recorded(func(origin ChunkID) (ChunkID, ChunkID, bool) {
		if origin == first.Origin {
			return first.Parent, forged, true
		}
		return "", "", false
	})
	got, err = a.Merge(b, taken)
	if err != nil {
		t.Fatal(err)
	}
	if got.Chunk(3).ID != forged || got.Chunk(4).Parent != forged {
		t.Fatalf("the record's id was not taken: chunk 3 is %s", got.Chunk(3).ID.Short())
	}
	if err := got.Verify(); err == nil {
		t.Fatal("Verify passed a chain with a forged id")
	}
}
