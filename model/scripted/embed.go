package scripted

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/openrath/rath/model"
)

// Hashed returns a deterministic, offline embedder of dimension dim (which
// must be positive), for tests and demos without an API key. Each word
// (a run of letters and digits, lower-cased) is hashed with 64-bit FNV-1a:
// the hash picks one of dim buckets and its top bit the sign added there;
// the vector is then scaled to length 1 (a text without words stays all
// zeros). Equal texts get equal vectors, and texts sharing words point
// the same way, unless hash collisions cancel them out, which is rare for
// dim in the hundreds. Its Provider is "scripted", its Name "hashed-<dim>";
// usage counts one input token per word. Calls are not retried.
func Hashed(dim int) model.Embedder {
	if dim <= 0 {
		panic(fmt.Sprintf("scripted: Hashed needs a positive dimension, not %d", dim))
	}
	name := fmt.Sprintf("hashed-%d", dim)
	return model.NewEmbedder(&hashed{dim: dim}, name, model.Options{Retry: model.RetryPolicy{MaxAttempts: 1}})
}

type hashed struct{ dim int }

// Name implements model.EmbedProvider.
func (*hashed) Name() string { return "scripted" }

// EmbedAttempt implements model.EmbedProvider.
func (h *hashed) EmbedAttempt(ctx context.Context, name string, texts []string) (*model.Embeddings, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &model.Embeddings{Vectors: make([][]float32, len(texts)), Model: name}
	acc := make([]float64, h.dim)
	for i, s := range texts {
		clear(acc)
		for _, w := range embedWords(s) {
			x := fnv1a(w)
			if x>>63 == 0 {
				acc[x%uint64(h.dim)]++
			} else {
				acc[x%uint64(h.dim)]--
			}
			out.Usage.InputTokens++
		}
		out.Vectors[i] = normalised(acc)
	}
	return out, nil
}

// embedWords splits s into lower-cased runs of letters and digits.
func embedWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// fnv1a is the 64-bit FNV-1a hash of s.
func fnv1a(s string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// normalised is v scaled to length 1, as float32s (zeros stay zeros).
func normalised(v []float64) []float32 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}
