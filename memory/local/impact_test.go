package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
)

// TestImpactTiesAndLengths: reading by impact ranks as reading every
// posting where the impact order is least like the order of the scores:
// many entries tie to the bit (the same words, or the same counts at the
// same length), a word held once by a one-word entry outscores it held
// many times by a long one, and one word is in nearly every entry.
func TestImpactTiesAndLengths(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBackend(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := memory.Over(b)
	rng := rand.New(rand.NewPCG(21, 22))
	n := 600
	if raceDetector {
		n = 240
	}
	for i := range n {
		var words []string
		switch i % 5 {
		case 0: // ties: one of a few texts, many times each
			words = strings.Fields([]string{"a b c", "a a b", "b c d e", "a"}[rng.IntN(4)])
		case 1: // short
			words = []string{"a", fmt.Sprint("r", rng.IntN(40))}[:1+rng.IntN(2)]
		case 2: // long, a word repeated
			for range 20 + rng.IntN(60) {
				words = append(words, []string{"a", "b", "c", fmt.Sprint("r", rng.IntN(40))}[rng.IntN(4)])
			}
		default: // mixed
			for range 2 + rng.IntN(12) {
				words = append(words, []string{"a", "b", "c", "d", "e", fmt.Sprint("r", rng.IntN(40))}[rng.IntN(6)])
			}
		}
		e := memory.Entry{URI: mustURI(t, fmt.Sprintf("memory://project/t%d/e%d", i%2, i)), Content: strings.Join(words, " ")}
		if _, err := m.Remember(ctx, nil, e); err != nil {
			t.Fatal(err)
		}
	}
	br := newBrute(contents(t, b))
	ids := scopeIDsOf(t, b, "project/t0", "project/t1")
	vocab := []string{"a", "b", "c", "d", "e", "r1", "r2", "r3", "r17", "zz"}
	for i := range 300 {
		words := make([]string, 1+rng.IntN(4))
		for j := range words {
			words[j] = vocab[rng.IntN(len(vocab))]
		}
		query, k, id := strings.Join(words, " "), 1+rng.IntN(30), ids[i%len(ids)]
		q, err := b.readQuery(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		full, err := b.bm25Scope(ctx, q, id, k, readEvery)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.bm25Scope(ctx, q, id, k, readByImpact)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(full, got) {
			t.Fatalf("%q k=%d: by impact %v, full %v", query, k, got, full)
		}
		lo, hi := scopeRange(id)
		if want := br.bm25(query, lo, hi, k); !sameRanking(full, want) {
			t.Fatalf("%q k=%d: %v, want %v", query, k, full, want)
		}
	}
	if b.lex.impacts.Load() == 0 {
		t.Fatal("no term was read by impact")
	}
}
