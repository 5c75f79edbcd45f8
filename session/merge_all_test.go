package session

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// foldMerge is MergeAll as a fold of Merge: what MergeAll must equal.
func foldMerge(s *Session, others []*Session, opts ...MergeOption) (*Session, error) {
	m := s
	for _, o := range others {
		var err error
		if m, err = m.Merge(o, opts...); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// branches forks base n ways and appends to each a random suffix: user and
// assistant chunks, some placements, and now and then a first chunk equal
// across branches (the same content and time, so the same id) or nothing.
func branches(rng *rand.Rand, base *Session, n int) []*Session {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	out := make([]*Session, n)
	for i := range out {
		b := base.Fork()
		if rng.IntN(10) == 0 {
			out[i] = b // added nothing
			continue
		}
		if rng.IntN(4) == 0 {
			b = b.Append(User("shared first").WithTime(at))
		}
		for j := range rng.IntN(6) + 1 {
			switch rng.IntN(8) {
			case 0:
				b = b.Append(Of(&Placement{Backend: "local", Spec: Spec{Dir: fmt.Sprint("/w", rng.IntN(2))}}))
			case 1:
				b = b.Append(Assistant("", NewToolCall(fmt.Sprint("c", j), "noop", `{"a":[1,2,{"parent":"x"}]}`)))
			default:
				b = b.Append(User(fmt.Sprintf("branch %d chunk %d", i, j)))
			}
		}
		out[i] = b
	}
	return out
}

func TestMergeAllEqualsFoldedMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := range 150 {
		base := FromUser("base")
		if rng.IntN(3) == 0 {
			base = base.To("local", Spec{Dir: "/w0"})
		}
		bs := branches(rng, base, rng.IntN(200)+1)
		for _, opts := range [][]MergeOption{{KeepPlacement(Ours)}, {KeepPlacement(Theirs)}, nil} {
			want, werr := foldMerge(bs[0], bs[1:], opts...)
			got, gerr := bs[0].MergeAll(bs[1:], opts...)
			if (werr == nil) != (gerr == nil) || (werr != nil && !errors.Is(gerr, ErrIncompatible)) {
				t.Fatalf("round %d: fold error %v, MergeAll error %v", round, werr, gerr)
			}
			if werr != nil {
				continue
			}
			if got.Len() != want.Len() || got.Head() != want.Head() {
				t.Fatalf("round %d: MergeAll gives %d chunks head %s, the fold %d head %s",
					round, got.Len(), got.Head().Short(), want.Len(), want.Head().Short())
			}
			for i := range want.Len() {
				if g, w := got.Chunk(i), want.Chunk(i); g.ID != w.ID || g.Origin != w.Origin || g.Parent != w.Parent {
					t.Fatalf("round %d: chunk %d differs", round, i)
				}
			}
			if err := got.Verify(); err != nil {
				t.Fatalf("round %d: the merged chain does not verify: %v", round, err)
			}
			if lin := got.Lineage(); len(lin.Parents) != len(bs) || lin.Kind != LineageMerge {
				t.Fatalf("round %d: lineage %+v", round, lin)
			}
		}
	}
}

func TestMergeAllOfNothing(t *testing.T) {
	s := FromUser("x")
	if got, err := s.MergeAll(nil); err != nil || got != s {
		t.Fatalf("MergeAll(nil) = %v, %v; want s itself", got, err)
	}
}

// BenchmarkMergeAll: joining 1,000 branches of 30 chunks each onto a
// 100-chunk base, as a fan-out's join does: MergeAll beside the fold of
// Merge it replaces.
func BenchmarkMergeAll(b *testing.B) {
	base := FromUser("base")
	for i := range 99 {
		base = base.Append(User(fmt.Sprint("base ", i)))
	}
	bs := make([]*Session, 1000)
	for i := range bs {
		f := base.Fork()
		for j := range 30 {
			f = f.Append(User(fmt.Sprintf("branch %d chunk %d", i, j)))
		}
		bs[i] = f
	}
	b.Run("fold", func(b *testing.B) {
		for b.Loop() {
			if _, err := foldMerge(bs[0], bs[1:]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/30_000, "ns/chunk")
	})
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			if _, err := bs[0].MergeAll(bs[1:]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/30_000, "ns/chunk")
	})
}
