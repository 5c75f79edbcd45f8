package postgres

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/openrath/rath/model"
)

// clustered is an embedder for benchmarks whose vectors lie in clusters, as
// real embeddings of texts on a few hundred topics do: a text's hash picks
// one of 256 fixed centroids and seeds the noise added to it. The hashed
// bag-of-words embedder gives near-orthogonal vectors with many equal
// similarities, on which no approximate index is meaningful.
type clustered struct {
	dim       int
	centroids [][]float64
}

func newClustered(dim int) model.Embedder {
	rng := rand.New(rand.NewPCG(7, 8))
	c := &clustered{dim: dim, centroids: make([][]float64, 256)}
	for i := range c.centroids {
		c.centroids[i] = make([]float64, dim)
		for j := range dim {
			c.centroids[i][j] = rng.NormFloat64()
		}
	}
	return model.NewEmbedder(c, "clustered-384", model.Options{Retry: model.RetryPolicy{MaxAttempts: 1}})
}

func (*clustered) Name() string { return "synthetic" }

func (c *clustered) EmbedAttempt(_ context.Context, name string, texts []string) (*model.Embeddings, error) {
	out := &model.Embeddings{Model: name, Vectors: make([][]float32, len(texts))}
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		seed := h.Sum64()
		rng := rand.New(rand.NewPCG(seed, 9))
		cen := c.centroids[seed%uint64(len(c.centroids))]
		v := make([]float32, c.dim)
		var norm float64
		for j := range v {
			x := cen[j] + 0.6*rng.NormFloat64()
			v[j], norm = float32(x), norm+x*x
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(norm))
		}
		out.Vectors[i] = v
	}
	return out, nil
}
