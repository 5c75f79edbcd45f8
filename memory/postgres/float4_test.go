package postgres

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestVectorEncoding(t *testing.T) {
	want := []float32{1, -0.5, float32(math.Inf(1)), 3.25e-7}
	got, err := decodeVector(encodeVector(want), nil)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, {1, 2, 3, 4, 5}} {
		if _, err := decodeVector(bad, nil); !errors.Is(err, ErrVector) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

func FuzzDecodeVector(f *testing.F) {
	f.Add(encodeVector([]float32{1, 2, 3}))
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVector(b, nil)
		if err != nil {
			return
		}
		if out := encodeVector(v); !slices.Equal(out, b) {
			t.Fatalf("%x decodes and encodes to %x", b, out)
		}
	})
}
