package local

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/openrath/rath/memory/internal/rank"
	"github.com/openrath/rath/model"
)

// Option configures a Backend.
type Option func(*Backend)

// WithEmbedder makes the backend embed every entry it writes and rank
// recalls by both bm25 and vector similarity, fused by reciprocal rank. An
// embedding failure fails the write or the recall; nothing is written
// without its vector.
func WithEmbedder(e model.Embedder) Option { return func(b *Backend) { b.embedder = e } }

// WithMinSimilarity sets the cosine similarity below which a vector match
// is not a hit (default 0.25).
func WithMinSimilarity(s float32) Option { return func(b *Backend) { b.minSim = s } }

// ErrVector: a stored vector is not a whole number of float32s.
var ErrVector = errors.New("memory/local: malformed stored vector")

// embed returns text's vector.
func (b *Backend) embed(ctx context.Context, text string) ([]float32, error) {
	out, err := b.embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return out.Vectors[0], nil
}

// encodeVector is v as little-endian float32s.
func encodeVector(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// decodeVector reads what encodeVector wrote.
func decodeVector(blob []byte) ([]float32, error) {
	if len(blob) == 0 || len(blob)%4 != 0 {
		return nil, fmt.Errorf("%w: %d bytes", ErrVector, len(blob))
	}
	v := make([]float32, len(blob)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
	}
	return v, nil
}

// putVector stores v as rowid's vector from this backend's embedder.
func (b *Backend) putVector(ctx context.Context, tx *sql.Tx, rowid int64, v []float32) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vectors(rowid, model, vec) VALUES(?, ?, ?)`, rowid, rank.EmbedderKey(b.embedder), encodeVector(v))
	return err
}

// nearest returns up to k rows of the scopes' ranges whose vectors (from
// this backend's embedder) are most similar to q, at least minSim, best
// first. Each scope is searched in the backend's vector index (see
// annIndex), concurrently, after the index has caught up with every write
// committed before the call; a query vector without direction is similar
// to nothing. A scope whose graph search finds fewer than k rows above
// minSim is searched again, more widely, then exactly (annIndex.answer);
// each row's Via says which search found it.
func (b *Backend) nearest(ctx context.Context, q []float32, ids []int64, k int) ([]rank.Ranked, error) {
	u := unit(q)
	if u == nil {
		return nil, nil
	}
	h, err := head(ctx, b.db)
	if err != nil {
		return nil, err
	}
	lists := make([][]rank.Ranked, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { lists[i], errs[i] = b.ann.search(ctx, id, h, u, k, b.minSim) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := slices.Concat(lists...)
	out = slices.DeleteFunc(out, func(r rank.Ranked) bool { return float32(r.Score) < b.minSim })
	rank.Sort(out)
	return out[:min(k, len(out))], nil
}
