package e2b_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

const testKey = "e2b_test_key_not_a_secret"

// startFake starts a fake E2B (or Cube) and a backend that reaches it:
// E2B with the fake's CA trusted by the transport, Cube through a CA
// bundle file, as a self-hosted Cube is configured.
func startFake(t testing.TB, fo e2bfake.Options) (*e2bfake.Server, *e2b.Backend) {
	t.Helper()
	fo.APIKey = testKey
	srv, err := e2bfake.Start(fo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	o := e2b.Options{APIURL: srv.URL(), APIKey: testKey, Domain: srv.Domain(), Transport: srv.Transport(true),
		Retry: remote.Retry{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, MaxWait: 2 * time.Second}}
	if fo.Cube {
		ca := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(ca, srv.CAPEM(), 0o600); err != nil {
			t.Fatal(err)
		}
		o.Provider, o.CAFile, o.Transport = e2b.Cube, ca, srv.Transport(false)
	}
	return srv, e2b.New(o)
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func open(t testing.TB, b *e2b.Backend, spec session.Spec) sandbox.Sandbox {
	t.Helper()
	sb, err := b.Open(testCtx(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func optionsOf(t testing.TB, srv *e2bfake.Server) e2b.Options {
	return e2b.Options{APIURL: srv.URL(), APIKey: testKey, Domain: srv.Domain(), Transport: srv.Transport(true)}
}
