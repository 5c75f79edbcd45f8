package local

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/memorytest"
	"github.com/openrath/rath/model"
	"github.com/openrath/rath/model/scripted"
)

func TestConformanceHybrid(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Memory {
		m, err := Open(context.Background(), filepath.Join(t.TempDir(), "m.db"), WithEmbedder(scripted.Hashed(256)))
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

// concepts embeds a text as the concepts of its words: synonyms share a
// dimension, so similarity finds what no shared word would.
type concepts struct {
	fail error
	name string
}

var conceptOf = map[string]int{"car": 0, "automobile": 0, "vehicle": 0, "database": 1, "sqlite": 1, "postgres": 1, "cat": 2, "kitten": 2}

func (c *concepts) Name() string { return "concepts" }

func (c *concepts) EmbedAttempt(ctx context.Context, _ string, texts []string) (*model.Embeddings, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	out := &model.Embeddings{}
	for _, t := range texts {
		v := make([]float32, 4)
		v[3] = 0.01 // never all zeros
		for _, w := range strings.Fields(strings.ToLower(t)) {
			if i, ok := conceptOf[strings.Trim(w, ".,")]; ok {
				v[i]++
			}
		}
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

func openHybrid(t *testing.T, path string, c *concepts) memory.Memory {
	t.Helper()
	e := model.NewEmbedder(c, c.name, model.Options{Retry: model.RetryPolicy{MaxAttempts: 1}})
	m, err := Open(context.Background(), path, WithEmbedder(e))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestHybridFindsWhatWordsMiss(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	c := &concepts{name: "v1"}
	m := openHybrid(t, path, c)
	for u, text := range map[string]string{
		"memory://project/p/a": "The automobile is parked outside.",
		"memory://project/p/b": "Backups of the sqlite file run nightly.",
		"memory://project/p/c": "A car and a kitten.",
		"memory://project/q/d": "Another car, in another scope.",
	} {
		if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(t, u), Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	hits, _, err := m.Recall(ctx, nil, memory.Query{Text: "car", Scopes: []string{"project/p"}, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, h := range hits {
		got[h.URI.Path] = true
		if h.Score <= 0 || h.URI.ScopeKey() != "project/p" {
			t.Fatalf("hit %+v", h)
		}
	}
	// c matches the word and the concept, a only the concept; b neither.
	if len(hits) != 2 || hits[0].URI.Path != "c" || !got["a"] {
		t.Fatalf("hits = %+v", hits)
	}

	// A changed entry is embedded again: the old vector does not linger.
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(t, "memory://project/p/a"), Content: "Tea at four."}); err != nil {
		t.Fatal(err)
	}
	if hits, _, _ := m.Recall(ctx, nil, memory.Query{Text: "vehicle", Scopes: []string{"project/p"}}); len(hits) != 1 || hits[0].URI.Path != "c" {
		t.Fatalf("after the change: %+v", hits)
	}

	// A failing embedder fails the write, which leaves nothing behind, and
	// the recall; neither is swallowed.
	c.fail = &model.StatusError{Status: 400, Message: "bad input"}
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: mustURI(t, "memory://project/p/e"), Content: "database"}); err == nil {
		t.Fatal("a write whose embedding failed succeeded")
	}
	if _, err := m.Get(ctx, mustURI(t, "memory://project/p/e")); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the failed write left an entry: %v", err)
	}
	if _, _, err := m.Recall(ctx, nil, memory.Query{Text: "car", Scopes: []string{"project/p"}}); err == nil {
		t.Fatal("a recall whose embedding failed succeeded")
	}
	c.fail = nil
	m.Close()

	// Another embedding model ignores the first one's vectors: only words
	// match until entries are written again.
	m2 := openHybrid(t, path, &concepts{name: "v2"})
	if hits, _, _ := m2.Recall(ctx, nil, memory.Query{Text: "vehicle", Scopes: []string{"project/p"}}); len(hits) != 0 {
		t.Fatalf("another model's vectors were used: %+v", hits)
	}
}

func FuzzDecodeVector(f *testing.F) {
	f.Add(encodeVector([]float32{1, -2.5, 0}))
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, blob []byte) {
		v, err := decodeVector(blob)
		if err != nil {
			if !errors.Is(err, ErrVector) {
				t.Fatalf("error %v does not wrap ErrVector", err)
			}
			return
		}
		if again := encodeVector(v); string(again) != string(blob) {
			t.Fatalf("round trip changed %x to %x", blob, again)
		}
	})
}
