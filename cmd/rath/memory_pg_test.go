package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// freshPostgres creates an empty database for one test on the server of
// RATH_TEST_POSTGRES (skipping without one), dropped when it ends.
func freshPostgres(t *testing.T) string {
	t.Helper()
	server := os.Getenv("RATH_TEST_POSTGRES")
	if server == "" {
		t.Skip("RATH_TEST_POSTGRES is not set (a postgres:// URL of a server where the tests may create databases); ./scripts/test starts a throwaway server and sets it")
	}
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "rath_cli_" + hex.EncodeToString(b[:])
	exec := func(sql string) {
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec("CREATE DATABASE " + name)
	t.Cleanup(func() { exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	u, _ := url.Parse(server)
	u.Path = "/" + name
	return u.String()
}

// TestMemoryMovesToPostgresAndBack: a team moves a local memory into the
// shared PostgreSQL one and back with export and import; the entries and
// their provenance arrive unchanged, the shared memory recalls and explains
// them, and a rollback there is recorded like any other.
func TestMemoryMovesToPostgresAndBack(t *testing.T) {
	pg := freshPostgres(t)
	home := memoryHome(t)
	sd := seedMemory(t, home)
	file := filepath.Join(t.TempDir(), "local.jsonl")
	rathOK(t, home, "memory", "export", "-o", file)

	if out := rathOK(t, home, "--memory", pg, "memory", "import", file); !strings.Contains(out, "3 new, 0 replaced, 0 unchanged") {
		t.Fatalf("import into PostgreSQL says %q", out)
	}
	want, _ := json.Marshal(listed(t, home))
	if got, _ := json.Marshal(listed(t, home, "--memory", pg)); !bytes.Equal(got, want) {
		t.Fatalf("in PostgreSQL:\n got %s\nwant %s", got, want)
	}
	// The shared memory explains the local run's recall from the same
	// session graph.
	out := rathOK(t, home, "--memory", pg, "--json", "memory", "explain", string(sd.run.ID()), cgoURI)
	if !strings.Contains(out, string(sd.writer.ID())) || !strings.Contains(out, string(sd.evidence)) {
		t.Fatalf("explain on PostgreSQL:\n%s", out)
	}

	back := filepath.Join(t.TempDir(), "pg.jsonl")
	rathOK(t, home, "--memory", pg, "memory", "export", "-o", back)
	home3 := filepath.Join(t.TempDir(), "home3")
	rathOK(t, home3, "memory", "import", back)
	if got, _ := json.Marshal(listed(t, home3)); !bytes.Equal(got, want) {
		t.Fatalf("back in a local memory:\n got %s\nwant %s", got, want)
	}

	out = rathOK(t, home, "--memory", pg, "memory", "forget", "--derived-from", string(sd.writer.ID()))
	if !strings.Contains(out, "forgot 2 entries") {
		t.Fatalf("rollback on PostgreSQL says %q", out)
	}
	if got := uris(listed(t, home, "--memory", pg)); got != notesURI {
		t.Fatalf("after the rollback PostgreSQL holds %s", got)
	}
}
