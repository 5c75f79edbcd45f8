package local

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"
)

// testGraph links n vectors of c (rows lo|i of scope 1) in a graph of m
// links per node.
func testGraph(c *clustered, n, m int) *graph {
	lo, _ := scopeRange(1)
	g := newGraph(c.dims, m, 40)
	for i := range n {
		g.add(lo+int64(i), unit(c.vector(uint64(i))))
	}
	g.linkAll()
	return g
}

func encoded(t testing.TB, g *graph, seq int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := encodeGraph(&buf, g, graphMeta{origin: "o", model: "test:model", scope: 1, seq: seq}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGraphDeterministic: the same rows in the same order make the same
// graph, so an index rebuilt from the table answers as the one it
// replaces.
func TestGraphDeterministic(t *testing.T) {
	c := newClustered(21, 16, 6, 4, 1, 0.3)
	a, b := encoded(t, testGraph(c, 800, 6), 1), encoded(t, testGraph(c, 800, 6), 1)
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the same rows differ")
	}
}

// TestGraphReplaceAndRemove: replaced and removed rows are never returned,
// their rows' live vectors are, and compaction keeps the live rows.
func TestGraphReplaceAndRemove(t *testing.T) {
	c := newClustered(22, 16, 6, 4, 1, 0.3)
	g := testGraph(c, 2000, 8)
	lo, _ := scopeRange(1)
	rng := rand.New(rand.NewPCG(1, 1))
	want := map[int64]uint64{} // row -> its vector's number, for live rows
	for i := range 2000 {
		want[lo+int64(i)] = uint64(i)
	}
	for i := range 1500 {
		key := lo + int64(rng.IntN(2000))
		if i%2 == 0 {
			g.remove(key)
			delete(want, key)
		} else {
			v := uint64(10_000 + i)
			g.upsert(key, unit(c.vector(v)))
			want[key] = v
		}
		if g.needsCompaction() {
			g = g.compacted()
		}
	}
	if g.live() != len(want) {
		t.Fatalf("%d live rows, want %d", g.live(), len(want))
	}
	self := 0
	for key, v := range want {
		got := g.search(unit(c.vector(v)), 10, 64)
		for _, r := range got {
			if g.dead[r.id] {
				t.Fatalf("a dead node was returned: %+v", r)
			}
			if _, ok := want[g.keys[r.id]]; !ok {
				t.Fatalf("a removed row was returned: %d", g.keys[r.id])
			}
		}
		if len(got) > 0 && g.keys[got[0].id] == key {
			self++
		}
	}
	if float64(self) < 0.99*float64(len(want)) {
		t.Fatalf("only %d of %d live rows find themselves first", self, len(want))
	}
}

// TestGraphRoundTrip: a decoded graph is the encoded one.
func TestGraphRoundTrip(t *testing.T) {
	c := newClustered(23, 16, 6, 4, 1, 0.3)
	g := testGraph(c, 500, 4)
	lo, _ := scopeRange(1)
	g.upsert(lo+3, unit(c.vector(9999)))
	g.remove(lo + 4)
	raw := encoded(t, g, 77)
	d, meta, err := decodeGraph(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if meta != (graphMeta{origin: "o", model: "test:model", scope: 1, seq: 77}) {
		t.Fatalf("meta %+v", meta)
	}
	if !slices.Equal(d.keys, g.keys) || !slices.Equal(d.vecs, g.vecs) || !slices.Equal(d.levels, g.levels) ||
		!slices.Equal(d.dead, g.dead) || d.entry != g.entry || d.top != g.top || d.ndead != g.ndead || d.live() != g.live() {
		t.Fatal("the decoded graph differs")
	}
	for n := range g.keys {
		for l := 0; l <= int(g.levels[n]); l++ {
			if !slices.Equal(d.linksAt(int32(n), l), g.linksAt(int32(n), l)) {
				t.Fatalf("node %d's links on layer %d differ", n, l)
			}
		}
	}
	if !bytes.Equal(encoded(t, d, 77), raw) {
		t.Fatal("re-encoding differs")
	}
}

// TestDecodeGraphRejects: every truncation, a flipped bit anywhere, and
// trailing bytes are ErrIndexCorrupt.
func TestDecodeGraphRejects(t *testing.T) {
	c := newClustered(24, 8, 3, 2, 1, 0.3)
	raw := encoded(t, testGraph(c, 60, 3), 5)
	bad := func(what string, b []byte) {
		t.Helper()
		if _, _, err := decodeGraph(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrIndexCorrupt) {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for n := range len(raw) {
		bad("truncated", raw[:n])
	}
	for i := range raw {
		b := slices.Clone(raw)
		b[i] ^= 1 << (i % 8)
		bad("flipped", b)
	}
	bad("trailing", append(slices.Clone(raw), 0))
}

// FuzzDecodeGraph: arbitrary bytes never panic the decoder; they are
// ErrIndexCorrupt or a graph that can be searched and grown. Each input is
// tried as it is and with its last four bytes made the right checksum, so
// that inputs get past the checksum to the structure's checks.
func FuzzDecodeGraph(f *testing.F) {
	c := newClustered(25, 4, 3, 2, 1, 0.3)
	for _, n := range []int{0, 1, 2, 40} {
		g := testGraph(c, n, 2)
		if n == 40 {
			lo, _ := scopeRange(1)
			g.remove(lo + 1)
			g.upsert(lo+2, unit(c.vector(77)))
		}
		raw := encoded(f, g, int64(n))
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
	}
	f.Add([]byte("RATHHNSW"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		try := func(b []byte) {
			g, _, err := decodeGraph(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				if !errors.Is(err, ErrIndexCorrupt) {
					t.Fatalf("error %v does not wrap ErrIndexCorrupt", err)
				}
				return
			}
			useGraph(t, g)
		}
		try(raw)
		if len(raw) >= 4 {
			fixed := slices.Clone(raw)
			binary.LittleEndian.PutUint32(fixed[len(fixed)-4:], crc32.Checksum(fixed[:len(fixed)-4], crc32.MakeTable(crc32.Castagnoli)))
			try(fixed)
		}
	})
}

// useGraph searches a decoded graph and inserts into it: every result is a
// live row's node, before and after.
func useGraph(t *testing.T, g *graph) {
	t.Helper()
	q := make([]float32, g.dims)
	q[0] = 1
	check := func() {
		for _, r := range g.search(q, 5, 8) {
			if g.dead[r.id] || g.byKey[g.keys[r.id]] != r.id {
				t.Fatalf("search returned node %d, not a live row's", r.id)
			}
		}
	}
	check()
	lo, hi := scopeRange(1)
	key := lo
	for ; key <= hi; key++ {
		if _, ok := g.byKey[key]; !ok {
			break
		}
	}
	g.upsert(key, q)
	if _, ok := g.byKey[key]; !ok {
		t.Fatal("the inserted row is not live")
	}
	check()
}
