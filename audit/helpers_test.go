package audit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/audit/audittest"
	"github.com/openrath/rath/internal/pgtest"
	"github.com/openrath/rath/store"
	_ "github.com/openrath/rath/store/postgres"
	_ "github.com/openrath/rath/store/sqlite"
)

// backend is a store the tests can reopen and edit behind its back.
type backend struct {
	name string
	url  string
	db   audittest.DB
}

func sqliteBackend(t testing.TB) backend {
	path := filepath.Join(t.TempDir(), "rath.db")
	return backend{name: "sqlite", url: "sqlite://" + path, db: audittest.SQLite(path)}
}

func postgresBackend(t testing.TB) backend {
	u := pgtest.FreshDB(t, "audit")
	return backend{name: "postgres", url: u, db: audittest.Postgres(u)}
}

// backends runs fn on SQLite and on PostgreSQL (which skips without
// RATH_TEST_POSTGRES).
func backends(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, sqliteBackend(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresBackend(t)) })
}

func (b backend) open(t testing.TB) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), b.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openLog(t testing.TB, st store.Store, o audit.Options) *audit.Log {
	t.Helper()
	l, err := audit.Open(t.Context(), st, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// record is the i-th test record: a grant decision by user-i, denied
// when i is a multiple of 3.
func record(i int) audit.Record {
	out := audit.OutcomeAllowed
	if i%3 == 0 {
		out = audit.OutcomeDenied
	}
	return audit.Record{Kind: audit.KindGrant, Principal: fmt.Sprintf("user-%d", i), Tenant: "acme", Project: "p1",
		Action: "runs.submit", Resource: "workflow/adder", Outcome: out, RequestID: fmt.Sprintf("req-%d", i)}
}

func appendN(t testing.TB, l *audit.Log, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := l.Append(t.Context(), record(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// mustVerify fails t unless the log verifies.
func mustVerify(t testing.TB, st store.Store) audit.Report {
	t.Helper()
	rep, err := audit.Verify(t.Context(), st)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

// mustTampered fails t unless Verify fails with ErrTampered and a problem
// naming lane and seq whose text contains what.
func mustTampered(t testing.TB, st store.Store, lane string, seq int64, what string) audit.Report {
	t.Helper()
	rep, err := audit.Verify(t.Context(), st)
	if !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("verify: %v, want ErrTampered", err)
	}
	for _, p := range rep.Problems {
		if string(p.Lane) == lane && p.Seq == seq && strings.Contains(p.What, what) {
			if !strings.Contains(err.Error(), p.String()) {
				t.Fatalf("the error does not name %q: %v", p, err)
			}
			return rep
		}
	}
	t.Fatalf("no problem names lane %s record %d (%q): %v", lane, seq, what, err)
	return rep
}
