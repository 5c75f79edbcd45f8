package runend_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/internal/runend"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
	_ "github.com/openrath/rath/store/postgres"
	_ "github.com/openrath/rath/store/sqlite"
)

// stores runs fn on a fresh SQLite store and a fresh PostgreSQL one.
func stores(t *testing.T, fn func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, openStore(t, "sqlite://"+filepath.Join(t.TempDir(), "rath.db"))) })
	t.Run("postgres", func(t *testing.T) { fn(t, openStore(t, pgtest.FreshDB(t, "rath_runend"))) })
}

func openStore(t testing.TB, url string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// call is a model-call chunk, told apart by n.
func call(n int) session.Chunk {
	return session.Of(&session.ModelCall{Provider: "test", Model: fmt.Sprintf("m%d", n)})
}

// commit stores s with the given labels and moves it to status.
func commit(t testing.TB, st store.Store, s *session.Session, status store.Status, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	if err := st.Commit(ctx, s, ""); err != nil {
		t.Fatal(err)
	}
	if len(labels) > 0 {
		if err := st.SetLabels(ctx, s.ID(), labels); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.MoveTo(ctx, st, s.ID(), status); err != nil {
		t.Fatal(err)
	}
}

// A run's unfinished sessions move to its end; its finished ones, its own
// input and other runs' sessions stay as they are; its steps count each
// model call once (a fork shares its parent's) and none its input held.
func TestEnd(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		in := session.FromUser("go").Append(call(0)) // a call of an earlier run
		commit(t, st, in, store.StatusActive, nil)
		mine := map[string]string{runctx.Label: string(in.ID())}
		a := in.Derive("agent:a", nil).Append(call(1), call(2))
		fork := a.Fork().Append(call(3))
		paused := in.Derive("agent:b", nil).Append(call(4))
		failed := in.Derive("agent:c", nil).Append(call(5))
		done := in.Derive("agent:d", nil)
		commit(t, st, a, store.StatusOpen, mine)
		commit(t, st, fork, store.StatusActive, mine)
		commit(t, st, paused, store.StatusPaused, mine)
		commit(t, st, failed, store.StatusFailed, mine)
		commit(t, st, done, store.StatusClosed, mine)
		other := in.Derive("agent:other", nil)
		commit(t, st, other, store.StatusOpen, map[string]string{runctx.Label: "ses_another"})

		if _, err := runend.End(ctx, st, in.ID(), store.StatusActive); !errors.Is(err, runend.ErrNotEnd) {
			t.Fatalf("end active: %v", err)
		}
		epoch, err := st.Advance(ctx, in.ID())
		if err != nil {
			t.Fatal(err)
		}
		stale := store.WithFence(ctx, store.Fence{Session: in.ID(), Epoch: epoch - 1})
		if _, err := runend.End(stale, st, in.ID(), store.StatusClosed); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("end under a stale fence: %v", err)
		}
		want := map[session.ID]store.Status{in.ID(): store.StatusActive, a.ID(): store.StatusOpen, fork.ID(): store.StatusActive,
			paused.ID(): store.StatusPaused, failed.ID(): store.StatusFailed, done.ID(): store.StatusClosed, other.ID(): store.StatusOpen}
		check(t, st, want, "after a fenced-out end")

		fenced := store.WithFence(ctx, store.Fence{Session: in.ID(), Epoch: epoch})
		res, err := runend.End(fenced, st, in.ID(), store.StatusClosed)
		if err != nil {
			t.Fatal(err)
		}
		if res.Moved != 3 || res.Steps != 5 {
			t.Fatalf("ended %+v, want 3 moved, 5 steps", res)
		}
		for _, id := range []session.ID{a.ID(), fork.ID(), paused.ID()} {
			want[id] = store.StatusClosed
		}
		check(t, st, want, "after the end")
		if info, err := st.Info(ctx, in.ID()); err != nil || info.Labels[runctx.StepsLabel] != "5" {
			t.Fatalf("steps label %q (%v)", info.Labels[runctx.StepsLabel], err)
		}
	})
}

// A failed run fails its open sessions (an open one directly).
func TestEndFailed(t *testing.T) {
	stores(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		in := session.FromUser("go")
		commit(t, st, in, store.StatusActive, nil)
		a := in.Derive("agent:a", nil).Append(call(1))
		commit(t, st, a, store.StatusOpen, map[string]string{runctx.Label: string(in.ID())})
		if _, err := runend.End(ctx, st, in.ID(), store.StatusFailed); err != nil {
			t.Fatal(err)
		}
		check(t, st, map[session.ID]store.Status{a.ID(): store.StatusFailed, in.ID(): store.StatusActive}, "after a failed end")
	})
}

func check(t *testing.T, st store.Store, want map[session.ID]store.Status, when string) {
	t.Helper()
	for id, w := range want {
		info, err := st.Info(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != w {
			t.Errorf("%s: %s (%s) is %s, want %s", when, id, info.Lineage.Op, info.Status, w)
		}
	}
}
