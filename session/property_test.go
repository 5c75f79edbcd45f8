package session

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// snapshot records what a session looked like when it was made, so later
// operations on other sessions can be checked not to have changed it.
type snapshot struct {
	s   *Session
	ids []ChunkID
}

func snap(s *Session) snapshot {
	ids := make([]ChunkID, 0, s.Len())
	for _, c := range s.All() {
		ids = append(ids, c.ID)
	}
	return snapshot{s, ids}
}

func randomChunk(r *rand.Rand, i int) Chunk {
	switch r.IntN(7) {
	case 0:
		return User(fmt.Sprintf("u%d", i))
	case 1:
		return Assistant(fmt.Sprintf("a%d", i), NewToolCall(fmt.Sprint(i), "t", fmt.Sprintf(`{"n":%d}`, i)))
	case 2:
		return Result(ToolResult{CallID: fmt.Sprint(i), Tool: "t", Content: fmt.Sprint(i)})
	case 3:
		return Of(&ModelCall{Provider: "p", Model: "m", Usage: Usage{InputTokens: int64(r.IntN(50)), OutputTokens: 1}})
	case 4:
		return Note(fmt.Sprintf("n%d", i))
	case 5:
		return Of(&MemoryEvent{Op: MemoryRecall, Query: "q", Hits: []MemoryHit{{URI: "memory://agent/a/x", Score: r.Float64(), Text: "t"}}})
	default:
		return Fail(FailModel, fmt.Sprint(i))
	}
}

// sumUsage recomputes usage the slow way, from every model call in the chain.
func sumUsage(s *Session) Usage {
	var u Usage
	for _, c := range s.All() {
		if c.ModelCall != nil {
			u = u.Add(c.ModelCall.Usage)
		}
	}
	return u
}

func TestPropertyRandomOperations(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			pool := []snapshot{snap(FromUser("root"))}
			counter := 0
			for step := 0; step < 150; step++ {
				src := pool[r.IntN(len(pool))].s
				var out *Session
				switch op := r.IntN(10); {
				case op < 5:
					var cs []Chunk
					for range 1 + r.IntN(40) {
						counter++
						cs = append(cs, randomChunk(r, counter))
					}
					out = src.Append(cs...)
					if out.ID() != src.ID() || out.Len() != src.Len()+len(cs) {
						t.Fatalf("step %d: append", step)
					}
				case op < 7:
					f, err := src.ForkAt(r.IntN(src.Len() + 1))
					if err != nil {
						t.Fatal(err)
					}
					out = f
				case op < 8:
					out = src.Fork()
				default:
					other := pool[r.IntN(len(pool))].s
					if src.Len()+other.Len() > 3000 {
						continue // keep the pool small enough to check often
					}
					m, err := src.Merge(other)
					if err != nil {
						t.Fatalf("step %d: merge: %v", step, err)
					}
					checkMerge(t, src, other, m)
					out = m
				}
				if err := out.Verify(); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				pool = append(pool, snap(out))
				if step%50 == 0 {
					checkPool(t, pool)
				}
			}
			checkPool(t, pool)
		})
	}
}

func checkMerge(t *testing.T, a, b, m *Session) {
	t.Helper()
	p := commonPrefix(a.t, b.t)
	want := a.Len() + b.Len() - p
	if m.Len() != want {
		t.Fatalf("merge length %d, want %d", m.Len(), want)
	}
	for i := range a.Len() {
		if m.Chunk(i).ID != a.Chunk(i).ID {
			t.Fatalf("merge changed our chunk %d", i)
		}
	}
	for i := p; i < b.Len(); i++ {
		got, orig := m.Chunk(a.Len()+i-p), b.Chunk(i)
		if got.Text() != orig.Text() || got.Kind != orig.Kind {
			t.Fatalf("merge: their chunk %d differs", i)
		}
		if a.Len() > p && got.Origin != orig.ID {
			t.Fatalf("merge: their chunk %d lost its origin", i)
		}
	}
	if p > 0 && a.Chunk(p-1).ID != b.Chunk(p-1).ID {
		t.Fatal("common prefix is not common")
	}
	if p < min(a.Len(), b.Len()) && a.Chunk(p).ID == b.Chunk(p).ID {
		t.Fatal("common prefix is too short")
	}
}

func checkPool(t *testing.T, pool []snapshot) {
	t.Helper()
	for k, sn := range pool {
		now := snap(sn.s).ids
		if !slices.Equal(now, sn.ids) {
			t.Fatalf("session %d changed after it was made", k)
		}
		if got, want := sn.s.Usage(), sumUsage(sn.s); got != want {
			t.Fatalf("session %d: usage %+v, recomputed %+v", k, got, want)
		}
		if k%17 == 0 {
			var buf bytes.Buffer
			if err := Encode(&buf, sn.s); err != nil {
				t.Fatal(err)
			}
			back, err := Decode(&buf)
			if err != nil {
				t.Fatalf("session %d: decode: %v", k, err)
			}
			if back.ID() != sn.s.ID() || !slices.Equal(snap(back).ids, sn.ids) {
				t.Fatalf("session %d: ids changed across encode/decode", k)
			}
		}
	}
}

func TestConcurrentAppendsToOneSession(t *testing.T) {
	// Many goroutines appending to the same source race for the same trie
	// slot; every result must still be a correct, independent session.
	src := build(t, 100)
	const n = 16
	outs := make([]*Session, n)
	done := make(chan int)
	for g := range n {
		go func() {
			s := src
			for i := range 50 {
				s = s.Append(User(fmt.Sprintf("g%d-%d", g, i)))
			}
			outs[g] = s
			done <- g
		}()
	}
	for range n {
		<-done
	}
	for g, s := range outs {
		if s.Len() != 150 {
			t.Fatalf("goroutine %d: len %d", g, s.Len())
		}
		for i := range 50 {
			if want := fmt.Sprintf("g%d-%d", g, i); s.Chunk(100+i).User.Text != want {
				t.Fatalf("goroutine %d chunk %d = %q, want %q", g, 100+i, s.Chunk(100+i).User.Text, want)
			}
		}
		if err := s.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	if src.Len() != 100 {
		t.Fatal("source changed")
	}
}
