package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/internal/backend"
)

// The benchmark bodies every backend runs, so their figures compare: a
// backend's bench_test.go names the benchmarks (their names are fixed by the
// project) and hands in a function opening a fresh, empty store.

// BenchChunk is a typical small chunk: a tool result of about 300 bytes.
func BenchChunk(i int) session.Chunk {
	return session.Result(session.ToolResult{CallID: fmt.Sprintf("call_%d", i), Tool: "read_file",
		Args: []byte(`{"path":"pkg/foo/foo.go"}`), Content: fmt.Sprintf("package foo // %d\n\nfunc Foo() int { return 41 }\n", i)})
}

// BenchCommitVsFsync measures one-chunk commits and, in the same run, a
// plain write+fsync of the same bytes to a local file. It reports both and
// their ratio as "x-fsync", and the process's CPU time per commit
// ("cpu-us/commit", the server's not included).
func BenchCommitVsFsync(b *testing.B, st store.Store) {
	ctx := context.Background()
	s := session.FromUser("bench")
	if err := st.Commit(ctx, s, ""); err != nil {
		b.Fatal(err)
	}
	var size int
	cpu := processCPU()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		next := s.Append(BenchChunk(i))
		if err := st.Commit(ctx, next, s.Head()); err != nil {
			b.Fatal(err)
		}
		last, _ := next.Last()
		data, _ := backend.AppendSegment(nil, []session.Chunk{last})
		size = len(data)
		s = next
	}
	commitNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	reportCPU(b, cpu, b.N)

	f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, size)
	start = time.Now()
	for range b.N {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	fsyncNs := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(commitNs, "commit-ns")
	b.ReportMetric(fsyncNs, "fsync-ns")
	b.ReportMetric(commitNs/fsyncNs, "x-fsync")
}

// BenchGroupCommit runs sessions=1, 8 and 64 concurrent writers, each
// committing one chunk at a time, and reports the aggregate "commits/s"
// and the process's CPU time per commit; at 64 also "x-single", the ratio
// to the single-session rate of the same run.
func BenchGroupCommit(b *testing.B, open func(b *testing.B) store.Store) {
	var single float64
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			st := open(b)
			ctx := context.Background()
			sessions := make([]*session.Session, n)
			for i := range sessions {
				sessions[i] = session.FromUser(fmt.Sprint("writer ", i))
				if err := st.Commit(ctx, sessions[i], ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			cpu := processCPU()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range n {
				wg.Go(func() {
					s := sessions[w]
					for i := w; i < b.N; i += n {
						next := s.Append(BenchChunk(i))
						if err := st.Commit(ctx, next, s.Head()); err != nil {
							b.Error(err)
							return
						}
						s = next
					}
				})
			}
			wg.Wait()
			rate := float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(rate, "commits/s")
			reportCPU(b, cpu, b.N)
			if n == 1 {
				single = rate
			} else if single > 0 && n == 64 {
				b.ReportMetric(rate/single, "x-single")
			}
		})
	}
}

// reportCPU reports the process's CPU time since `since` per commit, as
// "cpu-us/commit", where it is measured.
func reportCPU(b *testing.B, since time.Duration, commits int) {
	if now := processCPU(); now > 0 && commits > 0 {
		b.ReportMetric(float64((now-since).Nanoseconds())/1e3/float64(commits), "cpu-us/commit")
	}
}

// BigSession commits a session of n typical chunks, in commits of 10,000.
func BigSession(b *testing.B, st store.Store, n int) *session.Session {
	b.Helper()
	ctx := context.Background()
	s := session.FromUser("long run")
	if err := st.Commit(ctx, s, ""); err != nil {
		b.Fatal(err)
	}
	for s.Len() < n {
		cs := make([]session.Chunk, 0, 10_000)
		for i := s.Len(); i < n && len(cs) < cap(cs); i++ {
			switch i % 4 {
			case 0:
				cs = append(cs, session.User(fmt.Sprintf("please fix test %d", i)))
			case 1:
				cs = append(cs, session.Assistant("looking", session.NewToolCall(fmt.Sprint("c", i), "read_file", `{"path":"foo.go"}`)))
			case 2:
				cs = append(cs, BenchChunk(i))
			default:
				cs = append(cs, session.Of(&session.ModelCall{Provider: "p", Model: "m", Usage: session.Usage{InputTokens: 100, OutputTokens: 20}}))
			}
		}
		next := s.Append(cs...)
		if err := st.Commit(ctx, next, s.Head()); err != nil {
			b.Fatal(err)
		}
		s = next
	}
	return s
}

// BenchLoad loads a session of n chunks whole.
func BenchLoad(b *testing.B, st store.Store, n int) {
	s := BigSession(b, st, n)
	b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
		for b.Loop() {
			got, err := st.Load(context.Background(), s.ID())
			if err != nil || got.Len() != s.Len() {
				b.Fatal(err)
			}
		}
	})
}

// BenchLoadTail reads the last 100 chunks of a session of n chunks.
func BenchLoadTail(b *testing.B, st store.Store, n int) {
	s := BigSession(b, st, n)
	b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
		for b.Loop() {
			cs, err := st.Tail(context.Background(), s.ID(), 100)
			if err != nil || len(cs) != 100 || cs[99].ID != s.Head() {
				b.Fatal(err)
			}
		}
	})
}
