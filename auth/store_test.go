package auth

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/store"
	_ "github.com/openrath/rath/store/postgres"
	_ "github.com/openrath/rath/store/sqlite"
)

// stores runs f on a fresh SQLite store and on a fresh PostgreSQL one
// (skipped, saying why, without RATH_TEST_POSTGRES).
func stores(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, openStore(t, "sqlite://"+filepath.Join(t.TempDir(), "rath.db")))
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, openStore(t, pgtest.FreshDB(t, "rath_auth")))
	})
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

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
