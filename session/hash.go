package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// normalizeTime is how Append stores times: UTC, microsecond precision (what
// SQL timestamp columns keep), no monotonic reading.
func normalizeTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// computeID returns the content address of c: SHA-256 over the RFC 8785
// canonical JSON of the chunk without its "id" member. The parent id is a
// member of that object, so the id covers the whole chain before it.
func (c *Chunk) computeID() (ChunkID, error) {
	bp := canonBufs.Get().(*[]byte)
	defer canonBufs.Put(bp)
	canon, err := appendCanonicalChunk((*bp)[:0], c)
	if err != nil {
		return "", fmt.Errorf("encode %s chunk: %w", c.Kind, err)
	}
	if cap(canon) <= 1<<20 { // keep ordinary buffers, let huge ones go
		*bp = canon
	}
	return hashID(canon), nil
}

// canonBufs recycles encoding buffers: hashing is on every Append, and a
// fresh buffer per chunk would be most of its allocation.
var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func hashID(canon []byte) ChunkID {
	sum := sha256.Sum256(canon)
	var out [len(chunkIDPrefix) + 64]byte
	copy(out[:], chunkIDPrefix)
	hex.Encode(out[len(chunkIDPrefix):], sum[:])
	return ChunkID(out[:])
}

// Seal returns c as Append would store it after parent: tier and time
// resolved, Parent set, ID computed. It is how other packages (the store,
// importers) build chunks outside a Session.
func Seal(parent ChunkID, c Chunk) (Chunk, error) {
	if c.Tier == TierDefault {
		c.Tier = c.Kind.DefaultTier()
	}
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	c.Time = normalizeTime(c.Time)
	c.Parent = parent
	if err := c.Validate(); err != nil {
		return Chunk{}, err
	}
	id, err := c.computeID()
	if err != nil {
		return Chunk{}, err
	}
	c.ID = id
	return c, nil
}

// AppendCanonical appends the canonical encoding of c — the exact bytes its
// id is the SHA-256 of — to dst. Stores keep these bytes: IDOf recomputes
// the id from them without decoding, and DecodeChunkJSON reads them back.
func AppendCanonical(dst []byte, c *Chunk) ([]byte, error) { return appendCanonicalChunk(dst, c) }

// IDOf returns the chunk id of a canonical encoding.
func IDOf(canonical []byte) ChunkID { return hashID(canonical) }
