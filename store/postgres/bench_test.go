package postgres

import (
	"context"
	"testing"

	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/storetest"
)

// The benchmark bodies live in storetest, shared with the other backends.
// The server's WAL is on the same disk when it runs here, as in
// ./scripts/test; a commit also pays the round trips to the server.

// openBench opens a store on a fresh database; it skips without
// RATH_TEST_POSTGRES.
func openBench(b *testing.B) store.Store {
	b.Helper()
	st, err := Open(context.Background(), Options{URL: freshDB(b), Durability: store.Sync})
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
