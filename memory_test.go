package rath_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/memory"
)

// TestMemoryFollowsTheStore: on the SQLite store the runtime's memory is
// memory/local in the home; on a PostgreSQL store it is memory/postgres
// in the same database, so every worker shares it; $RATH_MEMORY and
// Config.Memory override either.
func TestMemoryFollowsTheStore(t *testing.T) {
	ctx := context.Background()
	t.Setenv("RATH_MEMORY", "")
	home := t.TempDir()
	rt, err := rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.Memory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join(home, "memory.db"))
	if rt.MemoryURL != "sqlite://"+filepath.ToSlash(abs) || !strings.HasPrefix(memory.Describe(m), "local ") {
		t.Fatalf("SQLite store: memory %s (%s)", rt.MemoryURL, memory.Describe(m))
	}
	rt.Close()

	other := filepath.Join(t.TempDir(), "elsewhere.db")
	t.Setenv("RATH_MEMORY", "sqlite://"+other)
	rt, err = rath.Open(ctx, rath.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Memory(ctx); err != nil {
		t.Fatal(err)
	}
	rt.Close()
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("RATH_MEMORY was not used: %v", err)
	}
	t.Setenv("RATH_MEMORY", "")

	db := pgtest.FreshDB(t, "rath_rt")
	rt, err = rath.Open(ctx, rath.Config{Home: t.TempDir(), Store: db})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	m, err = rt.Memory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rt.MemoryURL != db || !strings.HasPrefix(memory.Describe(m), "postgres ") {
		t.Fatalf("PostgreSQL store: memory %s (%s)", rt.MemoryURL, memory.Describe(m))
	}
	if _, err := m.Remember(ctx, nil, memory.Entry{URI: memory.MustParseURI("memory://project/p/x"), Content: "shared"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM rath_memory.entries`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the store's database holds %d memory entries, %v", n, err)
	}
}
