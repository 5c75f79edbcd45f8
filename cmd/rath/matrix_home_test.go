package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/openrath/rath/internal/pgtest"
)

// matrixStore makes the store of each case of the matrix.
type matrixStore struct {
	name string
	// cases returns, for the cases of one workflow, a function that gives
	// each case an empty store's URL ("": the home's SQLite).
	cases func(t *testing.T) func() string
}

var matrixStores = []matrixStore{
	{"sqlite", func(*testing.T) func() string { return func() string { return "" } }},
	{"postgres", func(t *testing.T) func() string {
		// One database per workflow, emptied between its cases: creating
		// and dropping one takes a second or two on a busy server.
		db, used := pgtest.FreshDB(t, "rath_matrix"), false
		return func() string {
			if used {
				emptyPostgres(t, db)
			}
			used = true
			return db
		}
	}},
}

// emptyPostgres deletes every row of the database's tables but their
// schema versions (the tables named meta, and River's river_migration): a
// store, a memory and a cluster's queue as a first run leaves them, but
// empty.
func emptyPostgres(t *testing.T, db string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') AND table_name NOT IN ('meta', 'river_migration')`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var schema, name string
		if err := rows.Scan(&schema, &name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, pgx.Identifier{schema, name}.Sanitize())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) > 0 {
		if _, err := conn.Exec(ctx, "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY CASCADE"); err != nil {
			t.Fatal(err)
		}
	}
}

// newCase is a rath of its own for one run of a workflow and its resumes:
// a fresh home, an empty store (storeURL), and so an empty long-term
// memory (the home's, or the store's PostgreSQL database). Runs must not see each
// other: the memory example recalls what an earlier run remembered, and
// the report example reports on the latest run in its store.
//
// The examples run offline (scripted models), with the home's tmp as
// TMPDIR (so that the projection knows temporary paths), on the local
// sandbox, and
// with the host's Go build cache as the home's (the engineering example
// runs `go test` in its sandbox with GOCACHE=<home>/cache/go-build: a cold
// cache compiles the standard library first, a minute and more per case).
// The local sandbox also keeps that cache out of a workspace: under bwrap
// the example copies the home's cache into each one. The examples' policy
// (examples/policies: their commands run without a person's approval) is
// the runs' policy.
func newCase(t *testing.T, bin, storeURL, gocache string) *built {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	for _, dir := range []string{"cache", "tmp"} {
		if err := os.MkdirAll(filepath.Join(home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if gocache != "" {
		if err := os.Symlink(gocache, filepath.Join(home, "cache", "go-build")); err != nil {
			t.Fatal(err)
		}
	}
	c := &built{t: t, bin: bin, home: home, storeURL: storeURL}
	policies, err := filepath.Abs(filepath.Join("..", "..", "examples", "policies"))
	if err != nil {
		t.Fatal(err)
	}
	c.env = []string{"TMPDIR=" + filepath.Join(home, "tmp"), "RATH_OFFLINE=1", "RATH_EXAMPLE_SANDBOX=local", "RATH_EXAMPLE_MODEL=", "RATH_POLICIES=" + policies}
	return c
}

// hostGoCache is the build cache of the go command running the tests ("" if
// it has none).
func hostGoCache(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" || dir == "off" {
		t.Logf("no Go build cache to share with the engineering example (%v): its cases compile the standard library", err)
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	return dir
}
