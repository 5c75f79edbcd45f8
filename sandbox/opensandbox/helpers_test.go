package opensandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

const (
	testKey   = "os_test_key_not_a_secret"
	testToken = "execd_token_not_a_secret"
)

// startFake starts a fake OpenSandbox that wants an API key and an execd
// access token, and a backend that reaches it with quick retries.
func startFake(t testing.TB, fo osfake.Options) (*osfake.Server, *opensandbox.Backend) {
	t.Helper()
	fo.APIKey, fo.AccessToken = testKey, testToken
	srv, err := osfake.Start(fo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, opensandbox.New(optionsOf(srv))
}

func optionsOf(srv *osfake.Server) opensandbox.Options {
	return opensandbox.Options{APIURL: srv.URL(), APIKey: testKey, Poll: 20 * time.Millisecond,
		Retry: remote.Retry{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond, MaxWait: 2 * time.Second}}
}

// use points the registered backend at a fake for one test.
func use(t *testing.T, fo osfake.Options, change func(*opensandbox.Options)) *osfake.Server {
	t.Helper()
	srv, _ := startFake(t, fo)
	o := optionsOf(srv)
	if change != nil {
		change(&o)
	}
	if err := opensandbox.Use(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = opensandbox.Use(opensandbox.FromEnv()) })
	return srv
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func open(t testing.TB, b *opensandbox.Backend, spec session.Spec) sandbox.Sandbox {
	t.Helper()
	sb, err := b.Open(testCtx(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	return sb
}
