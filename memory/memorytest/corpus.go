package memorytest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/openrath/rath/memory"
)

// Corpus makes n entries of 20 words drawn from a 5,000-word vocabulary
// ("w0" … "w4999", Zipf-distributed, as words are), in ten scopes: entry i
// is memory://project/p<i%10>/e<i>. It is the same for every call, so the
// backends' benchmarks measure alike and fixtures built from it can be
// kept.
func Corpus(n int) []memory.Entry {
	rng := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(rng, 1.1, 1, 4999)
	out := make([]memory.Entry, n)
	for i := range out {
		var b strings.Builder
		for w := range 20 {
			if w > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d", z.Uint64())
		}
		out[i] = memory.Entry{URI: memory.URI{Scope: memory.ScopeProject, ScopeID: fmt.Sprint("p", i%10), Path: fmt.Sprint("e", i)}, Content: b.String()}
	}
	return out
}
