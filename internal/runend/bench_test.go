package runend_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/internal/runend"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// BenchmarkEnd ends a run of 20 open sessions of 20 chunks each (10 model
// calls apiece), as a finished run of a few agents and forks leaves them:
// the List, the moves (closed: through active), the loads that count its
// steps and the steps label.
func BenchmarkEnd(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchEnd(b, openStore(b, "sqlite://"+filepath.Join(b.TempDir(), "rath.db"))) })
	b.Run("postgres", func(b *testing.B) {
		if os.Getenv("RATH_TEST_POSTGRES") == "" {
			b.Skip("RATH_TEST_POSTGRES is not set")
		}
		benchEnd(b, openStore(b, pgtest.FreshDB(b, "rath_runend_bench")))
	})
}

func benchEnd(b *testing.B, st store.Store) {
	const sessions, calls = 20, 10
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		in := session.FromUser("go")
		commit(b, st, in, store.StatusActive, nil)
		mine := map[string]string{runctx.Label: string(in.ID())}
		for i := range sessions {
			s := in.Derive("agent", nil)
			for j := range calls {
				s = s.Append(call(i*calls+j), session.Note("result"))
			}
			commit(b, st, s, store.StatusOpen, mine)
		}
		b.StartTimer()
		res, err := runend.End(ctx, st, in.ID(), store.StatusClosed)
		if err != nil || res.Moved != sessions || res.Steps != sessions*calls {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
