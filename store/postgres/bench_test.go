package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
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

// BenchmarkCommitVsInsert measures one-chunk commits against what the
// server cannot do without: a plain INSERT of a row of the same shape and
// size as the commit's segment row, its own transaction (one statement,
// synchronous_commit on), on the same pool. The two alternate, one each per
// iteration, so that both see the same disk and the same load; it reports
// both and their ratio as "x-insert".
func BenchmarkCommitVsInsert(b *testing.B) {
	st := openBench(b).(*Store)
	ctx := context.Background()
	if _, err := st.pool.Exec(ctx, `CREATE TABLE bench_raw(lane integer NOT NULL, first integer NOT NULL, n integer NOT NULL,
		data bytea NOT NULL, PRIMARY KEY(lane, first))`); err != nil {
		b.Fatal(err)
	}
	s := session.FromUser("bench")
	if err := st.Commit(ctx, s, ""); err != nil {
		b.Fatal(err)
	}
	var commit, insert time.Duration
	for i := 0; b.Loop(); i++ {
		next := s.Append(storetest.BenchChunk(i))
		last, _ := next.Last()
		data, err := backend.AppendSegment(nil, []session.Chunk{last})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := st.Commit(ctx, next, s.Head()); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := st.pool.Exec(ctx, `INSERT INTO bench_raw(lane, first, n, data) VALUES($1, $2, $3, $4)`, 1, i, 1, data); err != nil {
			b.Fatal(err)
		}
		insert += time.Since(t1)
		commit += t1.Sub(t0)
		s = next
	}
	b.ReportMetric(float64(commit.Nanoseconds())/float64(b.N), "commit-ns")
	b.ReportMetric(float64(insert.Nanoseconds())/float64(b.N), "insert-ns")
	b.ReportMetric(float64(commit)/float64(insert), "x-insert")
}
