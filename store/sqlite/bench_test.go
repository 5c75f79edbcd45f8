package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/storetest"
)

// The benchmark bodies live in storetest, shared with the other backends.

func openBench(b *testing.B) store.Store {
	b.Helper()
	st, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), "bench.db"), Durability: store.Sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func BenchmarkCommitVsFsync(b *testing.B) { storetest.BenchCommitVsFsync(b, openBench(b)) }

func BenchmarkGroupCommit(b *testing.B) { storetest.BenchGroupCommit(b, openBench) }

func BenchmarkLoad(b *testing.B) { storetest.BenchLoad(b, openBench(b), 1_000_000) }

func BenchmarkLoadTail(b *testing.B) { storetest.BenchLoadTail(b, openBench(b), 1_000_000) }
