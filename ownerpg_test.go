package rath_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// TestPostgresOwnerKeepsItsLock: an owner whose lock connection breaks
// connects and locks again, and says so in its record; one that finds the
// lock taken by then has lost the run, stops, and writes nothing more.
func TestPostgresOwnerKeepsItsLock(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.FreshDB(t, "rath_owner_lock")
	rt, err := rath.Open(ctx, rath.Config{Home: t.TempDir(), Store: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	// Two runs hold inside a tool; the second can be cancelled.
	start := func(ctx context.Context) (session.ID, chan error) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "block"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		runs, done := make(chan session.ID, 1), make(chan error, 1)
		go func() {
			_, err := rt.Run(ctx, "holder", rath.RunInput(dir), rath.OnStart(func(id session.ID) { runs <- id }))
			done <- err
		}()
		waitFor(t, filepath.Join(dir, "holding"))
		return <-runs, done
	}
	run, done := start(ctx)
	ctx2, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	run2, done2 := start(ctx2)
	owner := func() rath.Owner {
		info, err := rt.Store.Info(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		var o rath.Owner
		if err := jsonLabel(info, rath.OwnerLabel, &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	first := owner()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var conns int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'rath run owner' AND datname = current_database()`).Scan(&conns); err != nil || conns != 1 {
		t.Fatalf("%d lock connections for two runs of one runtime (%v)", conns, err)
	}
	// Its own process cannot take a run it runs (advisory locks stack
	// within one connection).
	if _, err := rt.Resume(ctx, run); !errors.Is(err, rath.ErrRunLive) {
		t.Fatalf("resume of a run this process runs: %v", err)
	}
	cut := func() {
		t.Helper()
		if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE application_name = 'rath run owner' AND datname = current_database()`); err != nil {
			t.Fatal(err)
		}
	}

	// The connection breaks: the owner locks again.
	cut()
	deadline := time.Now().Add(30 * time.Second)
	for owner().Since.Equal(first.Since) {
		if time.Now().After(deadline) {
			t.Fatal("the owner never locked again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	info, err := rt.Store.Info(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if st := rt.Statuses(ctx, []store.Info{info}); st[0] != store.StatusActive {
		t.Fatalf("a run whose owner locked again is %s", st[0])
	}

	// It breaks again, and another process takes the run over first.
	cut()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, first.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Store.Advance(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, rath.ErrOwnerLost) {
		t.Fatalf("the run that lost its lock ended with %v", err)
	}
	if info, err := rt.Store.Info(ctx, run); err != nil || info.Status != store.StatusActive {
		t.Fatalf("the owner that lost the run wrote its end: %+v, %v", info, err)
	}
	// The other run kept its lock.
	info2, err := rt.Store.Info(ctx, run2)
	if err != nil {
		t.Fatal(err)
	}
	if st := rt.Statuses(ctx, []store.Info{info2}); st[0] != store.StatusActive {
		t.Fatalf("the run that kept its lock is %s", st[0])
	}
	cancel2()
	<-done2
	if info2, err := rt.Store.Info(ctx, run2); err != nil || info2.Status != store.StatusFailed {
		t.Fatalf("the cancelled run: %+v, %v", info2, err)
	}
}
