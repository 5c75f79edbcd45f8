package auth

import (
	"context"
	"testing"
)

// BenchmarkAuthenticate measures Authenticate of a cached token: the cost
// of every request after the first within the cache TTL.
func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	tk := NewTokens(openStore(b, "sqlite://"+b.TempDir()+"/rath.db"))
	secret, _, err := tk.Create(ctx, Spec{Grants: []string{"run.read"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tk.Authenticate(ctx, secret); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAuthenticateUncached measures Authenticate reading the store
// each time (WithCacheTTL(0)) on SQLite.
func BenchmarkAuthenticateUncached(b *testing.B) {
	ctx := context.Background()
	tk := NewTokens(openStore(b, "sqlite://"+b.TempDir()+"/rath.db"), WithCacheTTL(0))
	secret, _, err := tk.Create(ctx, Spec{Grants: []string{"run.read"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tk.Authenticate(ctx, secret); err != nil {
			b.Fatal(err)
		}
	}
}
