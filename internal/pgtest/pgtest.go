// Package pgtest gives tests throwaway PostgreSQL databases on the server
// named by RATH_TEST_POSTGRES (scripts/test starts one and sets it); without
// it, they skip with a message that says so.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Server is RATH_TEST_POSTGRES, or t skips.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv("RATH_TEST_POSTGRES")
	if u == "" {
		t.Skip("RATH_TEST_POSTGRES is not set (a postgres:// URL of a server where the tests may create databases); ./scripts/test starts a throwaway server and sets it")
	}
	return u
}

// FreshDB creates an empty database named prefix_<random> for one test,
// dropped when it ends, and returns its URL.
func FreshDB(t testing.TB, prefix string) string {
	t.Helper()
	server := Server(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := prefix + "_" + hex.EncodeToString(b[:])
	Exec(t, server, "CREATE DATABASE "+name)
	t.Cleanup(func() { Exec(t, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return WithDB(t, server, name)
}

// WithDB is server's URL naming the database name instead.
func WithDB(t testing.TB, server, name string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// Exec runs one statement on a connection of its own, failing t on error.
func Exec(t testing.TB, dbURL, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
