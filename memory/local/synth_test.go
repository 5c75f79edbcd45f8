package local

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/model"
)

// clustered draws synthetic embeddings from a mixture of Gaussians: a
// random centre from a fixed set, plus a Gaussian of rank `rank` (its own
// random basis per centre), plus a little isotropic noise. Sentence
// embeddings look like this: topics, and within a topic a low intrinsic
// dimension. (Isotropic noise in every dimension instead makes all of a
// cluster's members nearly equally similar to each other, a case with no
// meaningful nearest neighbours.) Vector i is a function of the seed and i
// alone, so any vector can be drawn again without storing it.
type clustered struct {
	seed    uint64
	dims    int
	rank    int
	centres [][]float32
	bases   [][]float32 // centre c's basis: rank rows of dims
	spread  float64     // the low-rank part's scale
	noise   float64     // the isotropic part's scale
}

func newClustered(seed uint64, dims, clusters, rank int, spread, noise float64) *clustered {
	rng := rand.New(rand.NewPCG(seed, 0))
	c := &clustered{seed: seed, dims: dims, rank: rank, spread: spread, noise: noise,
		centres: make([][]float32, clusters), bases: make([][]float32, clusters)}
	for i := range c.centres {
		c.centres[i] = gaussian(rng, dims, 1)
		c.bases[i] = gaussian(rng, rank*dims, 1/math.Sqrt(float64(rank)))
	}
	return c
}

func gaussian(rng *rand.Rand, n int, sd float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * sd)
	}
	return v
}

// vector is the i-th vector of the distribution.
func (c *clustered) vector(i uint64) []float32 {
	rng := rand.New(rand.NewPCG(c.seed, i+1))
	k := rng.IntN(len(c.centres))
	v := make([]float32, c.dims)
	copy(v, c.centres[k])
	for r := range c.rank {
		z := float32(rng.NormFloat64() * c.spread)
		row := c.bases[k][r*c.dims : (r+1)*c.dims]
		for j := range v {
			v[j] += z * row[j]
		}
	}
	for j := range v {
		v[j] += float32(rng.NormFloat64() * c.noise)
	}
	return v
}

// query is the i-th query: drawn from the same distribution as the
// vectors, but never one of them.
func (c *clustered) query(i uint64) []float32 { return c.vector(1<<48 + i) }

// synthEmbedder embeds "v<i>" as the distribution's vector i, "q<i>" as
// its query i, and any other text as the vector numbered by its hash.
type synthEmbedder struct{ c *clustered }

func (synthEmbedder) Name() string { return "synth" }

func (e synthEmbedder) EmbedAttempt(ctx context.Context, _ string, texts []string) (*model.Embeddings, error) {
	out := &model.Embeddings{}
	for _, t := range texts {
		out.Vectors = append(out.Vectors, e.embed(t))
	}
	return out, nil
}

func (e synthEmbedder) embed(text string) []float32 {
	if len(text) > 1 {
		if i, err := strconv.ParseUint(text[1:], 10, 64); err == nil {
			switch text[0] {
			case 'v':
				return e.c.vector(i)
			case 'q':
				return e.c.query(i)
			}
		}
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	return e.c.vector(h.Sum64() >> 16)
}

// newSynth is an embedder over c, named after its shape.
func newSynth(c *clustered) model.Embedder {
	return model.NewEmbedder(synthEmbedder{c}, fmt.Sprintf("clustered-%d", c.dims), model.Options{Retry: model.RetryPolicy{MaxAttempts: 1}})
}

// withANN adjusts the vector index's configuration.
func withANN(f func(*annConfig)) Option { return func(b *Backend) { f(&b.annCfg) } }

// loadVectors writes entries base..base+n-1 to scope ("project/<scope>"),
// entry i holding "v<i>" and the distribution's vector i, without calling
// the embedder.
func loadVectors(tb testing.TB, b *Backend, c *clustered, scope string, base, n int) {
	tb.Helper()
	es := make([]memory.Entry, n)
	for i := range es {
		es[i] = memory.Entry{URI: memory.URI{Scope: memory.ScopeProject, ScopeID: scope, Path: fmt.Sprint("e", base+i)}, Content: fmt.Sprint("v", base+i)}
	}
	bulkLoad(tb, b, es, func(i int) []float32 { return c.vector(uint64(base + i)) })
}
