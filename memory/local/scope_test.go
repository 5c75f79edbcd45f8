package local_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/local"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// TestMemoryScopes: an entry written in a tenant's project is recalled,
// read, listed and forgotten there only — not from another tenant, another
// project or the default scope — and callers see the URI they wrote.
func TestMemoryScopes(t *testing.T) {
	base := context.Background()
	mem, err := local.Open(base, filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	acme := runctx.WithScope(base, store.Scope{Tenant: "acme", Project: "web"})
	acmeAPI := runctx.WithScope(base, store.Scope{Tenant: "acme", Project: "api"})
	globex := runctx.WithScope(base, store.Scope{Tenant: "globex", Project: "web"})
	uri := memory.URI{Scope: memory.ScopeProject, ScopeID: "rath", Path: "facts/db"}
	s := session.FromUser("the database is PostgreSQL 17")
	if _, err := mem.Remember(acme, s, memory.Entry{URI: uri, Content: "acme's database is PostgreSQL 17"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Remember(base, s, memory.Entry{URI: uri, Content: "the default scope's database is SQLite"}); err != nil {
		t.Fatal(err)
	}
	recall := func(ctx context.Context) []memory.Hit {
		t.Helper()
		hits, _, err := mem.Recall(ctx, s, memory.Query{Text: "database", Scopes: []string{"project/rath"}, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	if hits := recall(acme); len(hits) != 1 || hits[0].Content != "acme's database is PostgreSQL 17" || hits[0].URI != uri {
		t.Fatalf("acme/web recalls %+v", hits)
	}
	if hits := recall(base); len(hits) != 1 || hits[0].Content != "the default scope's database is SQLite" {
		t.Fatalf("the default scope recalls %+v", hits)
	}
	for name, ctx := range map[string]context.Context{"another project": acmeAPI, "another tenant": globex} {
		if hits := recall(ctx); len(hits) != 0 {
			t.Errorf("%s recalls %+v", name, hits)
		}
		if _, err := mem.Get(ctx, uri); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("%s reads acme's entry: %v", name, err)
		}
		if es, err := mem.List(ctx, "memory://"); err != nil || len(es) != 0 {
			t.Errorf("%s lists %+v %v", name, es, err)
		}
		if _, _, err := mem.Forget(ctx, s, memory.Selector{Prefix: "memory://"}); !errors.Is(err, memory.ErrScope) {
			t.Errorf("%s forgets every scope's entries: %v", name, err)
		}
		if n, _, err := mem.Forget(ctx, s, memory.Selector{URI: uri.String()}); err != nil || n != 0 {
			t.Errorf("%s forgets acme's entry: %d %v", name, n, err)
		}
	}
	if e, err := mem.Get(acme, uri); err != nil || e.Content != "acme's database is PostgreSQL 17" || e.URI != uri {
		t.Fatalf("acme reads %+v %v", e, err)
	}
	es, err := mem.List(base, "memory://")
	if err != nil || len(es) != 1 || es[0].Content != "the default scope's database is SQLite" {
		t.Fatalf("the default scope lists %+v %v", es, err)
	}
	if n, _, err := mem.Forget(acme, s, memory.Selector{URI: uri.String()}); err != nil || n != 1 {
		t.Fatalf("acme forgets its entry: %d %v", n, err)
	}
	if hits := recall(acme); len(hits) != 0 {
		t.Fatalf("acme recalls a forgotten entry: %+v", hits)
	}
	if hits := recall(base); len(hits) != 1 {
		t.Fatalf("acme's forget reached the default scope: %+v", hits)
	}
}
