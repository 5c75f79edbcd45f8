package local

import "math"

// dot is the inner product of two vectors of one length, in float32 with
// eight independent sums so the loop pipelines (there is no SIMD in pure
// Go). Callers pass unit vectors, so it is their cosine similarity.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// unit returns v scaled to length 1 (computed in float64), or nil if v is
// all zeros or holds a NaN or an infinity: such a vector has no direction,
// so it is similar to nothing (model.Cosine gives it 0).
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		n += f * f
	}
	if n == 0 || math.IsInf(n, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}
