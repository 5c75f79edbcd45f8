package local

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// ErrOption: an option of the vector index is out of range.
var ErrOption = errors.New("memory/local: bad vector index option")

// WithEfSearch sets how many candidates a graph search keeps (HNSW's
// efSearch; at least k is always kept). Default 256. Recall rises and
// latency grows with it, about in proportion, until the search finds
// everything: on 100,000 384-dimension vectors recall@10 measured 0.942,
// 0.989 and 0.998 at 64, 128 and 256 on overlapping clusters, and 0.9125,
// 0.9825 and 0.9975 on low-rank data (see defaultANN), for one graph
// search of roughly a quarter, half and all of the default's cost. A
// recall that finds fewer than k vectors above the similarity cut-off
// searches again more widely, then exactly, whatever this is.
func WithEfSearch(n int) Option { return func(b *Backend) { b.annCfg.efSearch = n } }

// WithExactScanBelow sets the number of vectors below which a scope is
// scanned exactly instead of searched through a graph. Default 4,096. A
// scan is exact and its cost grows with the scope (about 0.12 ms a
// thousand 384-dimension vectors on the reference machine), a graph
// search's barely; below the threshold a scope also costs no graph
// building. Raise it to trade latency for exactness on small scopes;
// 0 links a graph at the first vector.
func WithExactScanBelow(n int) Option { return func(b *Backend) { b.annCfg.minGraph = n } }

// WithGraph sets the shape of the graphs built from now on (a graph read
// from its file keeps the shape it was built with): m links a node on the
// upper layers (2m on the lowest) and efConstruction candidates kept while
// linking one. Defaults 16 and 100. Larger values make a graph that
// searches find more of, at the cost of memory (m: 8 bytes a link) and
// build time (both: about in proportion); efConstruction 64 built 1.6
// times faster but left recall@10 at 0.970 where 100 reached 1.000 on
// the benchmark's clustered data.
func WithGraph(m, efConstruction int) Option {
	return func(b *Backend) { b.annCfg.m, b.annCfg.efBuild = m, efConstruction }
}

// check reports an option out of range.
func (c annConfig) check() error {
	switch {
	case c.efSearch < 1 || c.efSearch > maxEfSearch:
		return fmt.Errorf("%w: efSearch %d (1 to %d)", ErrOption, c.efSearch, maxEfSearch)
	case c.minGraph < 0:
		return fmt.Errorf("%w: exact scan below %d vectors", ErrOption, c.minGraph)
	case c.m < 2 || c.m > maxM:
		return fmt.Errorf("%w: m %d (2 to %d)", ErrOption, c.m, maxM)
	case c.efBuild < 1 || c.efBuild > maxEfBuild:
		return fmt.Errorf("%w: efConstruction %d (1 to %d)", ErrOption, c.efBuild, maxEfBuild)
	}
	return nil
}

// maxEfSearch bounds efSearch: beyond it a scan is cheaper.
const maxEfSearch = 1 << 16

// urlOptions reads the vector index's options from a sqlite: URL's query:
// ef_search, exact_below, m and ef_construction (see WithEfSearch,
// WithExactScanBelow, WithGraph).
func urlOptions(q url.Values) ([]Option, error) {
	var opts []Option
	num := func(name string) (int, bool, error) {
		s := q.Get(name)
		if s == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, false, fmt.Errorf("%w: %s=%q", ErrOption, name, s)
		}
		return n, true, nil
	}
	var errs []error
	if n, ok, err := num("ef_search"); ok {
		opts = append(opts, WithEfSearch(n))
	} else if err != nil {
		errs = append(errs, err)
	}
	if n, ok, err := num("exact_below"); ok {
		opts = append(opts, WithExactScanBelow(n))
	} else if err != nil {
		errs = append(errs, err)
	}
	m, okM, errM := num("m")
	efc, okE, errE := num("ef_construction")
	errs = append(errs, errM, errE)
	if okM || okE {
		opts = append(opts, func(b *Backend) {
			if okM {
				b.annCfg.m = m
			}
			if okE {
				b.annCfg.efBuild = efc
			}
		})
	}
	return opts, errors.Join(errs...)
}
