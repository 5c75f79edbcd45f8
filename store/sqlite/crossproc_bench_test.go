package sqlite

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	"github.com/openrath/rath/store/storetest"
)

// The writer's own cost, without the disk's: the same benchmarks as
// bench_test.go on tmpfs (/dev/shm), where fsync costs next to nothing,
// so that a change of the commit path's CPU shows through a noisy disk.
// The Watched forms run while another store on the file watches it (its
// poller reading the change log the commits write).

func openShm(b *testing.B) store.Store {
	b.Helper()
	if _, err := os.Stat("/dev/shm"); err != nil {
		b.Skip("no /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "rath-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	st, err := Open(context.Background(), Options{Path: dir + "/bench.db", Durability: store.Sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// watchedBy opens a second store on st's file and watches it until the
// benchmark ends, draining the events.
func watchedBy(b *testing.B, st store.Store) {
	b.Helper()
	other, err := Open(context.Background(), Options{Path: st.(*Store).Path()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := other.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ch {
		}
	}()
	b.Cleanup(func() { cancel(); <-done; other.Close() })
}

func BenchmarkCommitTmpfs(b *testing.B) { storetest.BenchCommitVsFsync(b, openShm(b)) }

func BenchmarkGroupCommitTmpfs(b *testing.B) { storetest.BenchGroupCommit(b, openShm) }

func BenchmarkCommitTmpfsWatched(b *testing.B) {
	st := openShm(b)
	watchedBy(b, st)
	storetest.BenchCommitVsFsync(b, st)
}

// BenchmarkSetLabelTmpfs is one label write at a time, as a run's state
// changes.
func BenchmarkSetLabelTmpfs(b *testing.B) {
	st := openShm(b)
	ctx := context.Background()
	s := session.FromUser("labelled")
	if err := st.Commit(ctx, s, ""); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if err := st.SetLabel(ctx, s.ID(), "state", fmt.Sprint("s", i%8)); err != nil {
			b.Fatal(err)
		}
	}
}
