package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrVector: a stored vector is not a whole number of float32s.
var ErrVector = errors.New("memory/postgres: malformed stored vector")

// A vector is stored twice: as real[], from which pgvector's column is
// generated, and as raw little-endian float32s, which the exact scan reads.
// The server sends a real[] element by element (array_send: ~45 µs for a
// 384-dimension vector, measured), raw bytes as they are.

// encodeVector is v as little-endian float32s.
func encodeVector(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// decodeVector reads what encodeVector wrote into v, reusing its storage.
func decodeVector(b []byte, v []float32) ([]float32, error) {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: %d bytes", ErrVector, len(b))
	}
	v = v[:0]
	for i := 0; i < len(b); i += 4 {
		v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return v, nil
}
