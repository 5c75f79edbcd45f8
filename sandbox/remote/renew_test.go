package remote_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

// An open handle renews its sandbox's lifetime again and again, idle or
// not; a closed one stops.
func TestOpenHandleRenewsTheLifetime(t *testing.T) {
	home := t.TempDir()
	var renewals atomic.Int64
	sb, err := remote.New(context.Background(), remote.Config{
		Backend: "host", ID: filepath.Base(home), Conn: &hostConn{home: home}, Spec: session.Spec{},
		Caps:       sandbox.Capabilities{Reattach: true},
		Renew:      func(context.Context) error { renewals.Add(1); return nil },
		RenewEvery: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for renewals.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d renewals in 10s of an open handle", renewals.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	after := renewals.Load()
	time.Sleep(50 * time.Millisecond)
	if n := renewals.Load(); n != after {
		t.Fatalf("%d renewals after Close", n-after)
	}
}
