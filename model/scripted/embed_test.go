package scripted

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"testing"

	"github.com/openrath/rath/model"
)

func embed(t *testing.T, e model.Embedder, texts ...string) *model.Embeddings {
	t.Helper()
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestHashedNames(t *testing.T) {
	e := Hashed(64)
	if e.Provider() != "scripted" || e.Name() != "hashed-64" {
		t.Fatalf("%s:%s", e.Provider(), e.Name())
	}
	got := embed(t, e, "one two, three", "")
	if got.Dim() != 64 || got.Model != "hashed-64" || got.Usage.InputTokens != 3 || len(got.Attempts) != 1 {
		t.Fatalf("got %+v", got)
	}
}

func TestHashedDeterministic(t *testing.T) {
	a := embed(t, Hashed(128), "The cat sat on the mat.", "The cat sat on the mat.", "THE CAT -- sat on (the) mat")
	b := embed(t, Hashed(128), "The cat sat on the mat.")
	if !slices.Equal(a.Vectors[0], a.Vectors[1]) || !slices.Equal(a.Vectors[0], b.Vectors[0]) {
		t.Fatal("identical texts, different vectors")
	}
	if !slices.Equal(a.Vectors[0], a.Vectors[2]) {
		t.Fatal("case and punctuation changed the vector")
	}
}

func TestHashedUnitLength(t *testing.T) {
	got := embed(t, Hashed(32), "alpha beta gamma delta", "x", "...", "Ünïcode wörds 42")
	for i, v := range got.Vectors {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		want := 1.0
		if i == 2 { // no words
			want = 0
		}
		if math.Abs(n-want) > 1e-5 {
			t.Errorf("text %d: squared norm %v", i, n)
		}
	}
}

func TestHashedSharedWordsAreSimilar(t *testing.T) {
	pairs := [][2]string{
		{"the deploy failed on staging", "staging deploy is green again"},
		{"Postgres connection pool exhausted", "raise the postgres pool size"},
		{"user prefers dark mode", "Dark mode for this user"},
	}
	e := Hashed(256)
	for _, p := range pairs {
		got := embed(t, e, p[0], p[1], "completely unrelated banana words")
		near, far := model.Cosine(got.Vectors[0], got.Vectors[1]), model.Cosine(got.Vectors[0], got.Vectors[2])
		if near <= 0 || near <= far {
			t.Errorf("%q: cosine %v with %q, %v with an unrelated text", p[0], near, p[1], far)
		}
	}
	got := embed(t, e, "same words here", "here words same")
	if c := model.Cosine(got.Vectors[0], got.Vectors[1]); math.Abs(float64(c)-1) > 1e-6 {
		t.Errorf("word order changed the vector: cosine %v", c)
	}
}

func TestFNV1aMatchesStdlib(t *testing.T) {
	for _, s := range []string{"", "a", "hello", "wörd"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got := fnv1a(s); got != h.Sum64() {
			t.Errorf("fnv1a(%q) = %x, want %x", s, got, h.Sum64())
		}
	}
}

func TestHashedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Hashed(8).Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestHashedNeedsPositiveDim(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Hashed(0)
}
