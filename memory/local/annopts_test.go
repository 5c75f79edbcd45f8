package local

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/model/scripted"
)

// TestANNOptions: the vector index's options, given as options or in a
// sqlite: URL, reach its configuration; out of range they fail the open
// with ErrOption.
func TestANNOptions(t *testing.T) {
	ctx := context.Background()
	q, _ := url.ParseQuery("ef_search=200&exact_below=10000&m=24&ef_construction=150")
	opts, err := urlOptions(q)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenBackend(ctx, filepath.Join(t.TempDir(), "m.db"), append(opts, WithEmbedder(scripted.Hashed(8)))...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if c := b.ann.cfg; c.efSearch != 200 || c.minGraph != 10_000 || c.m != 24 || c.efBuild != 150 {
		t.Fatalf("configuration %+v", c)
	}
	if c := defaultANN(); c.efSearch != 256 {
		t.Fatalf("default efSearch %d", c.efSearch)
	}
	for _, bad := range []Option{WithEfSearch(0), WithExactScanBelow(-1), WithGraph(1, 100), WithGraph(16, 0)} {
		if b, err := OpenBackend(ctx, filepath.Join(t.TempDir(), "m.db"), bad); !errors.Is(err, ErrOption) {
			if b != nil {
				b.Close()
			}
			t.Errorf("open: %v, want ErrOption", err)
		}
	}
	if _, err := urlOptions(url.Values{"ef_search": {"many"}}); !errors.Is(err, ErrOption) {
		t.Errorf("ef_search=many: %v, want ErrOption", err)
	}
}
