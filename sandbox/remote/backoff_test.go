package remote_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox/remote"
)

func TestRetryAfterForms(t *testing.T) {
	soon := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		v        string
		min, max time.Duration
	}{
		{"", 0, 0}, {"2", 2 * time.Second, 2 * time.Second}, {" 1 ", time.Second, time.Second},
		{"-5", 0, 0}, {"nonsense", 0, 0}, {"3600", time.Minute, time.Minute},
		{soon, time.Second, 3 * time.Second}, {"Mon, 02 Jan 2006 15:04:05 GMT", 0, 0},
	} {
		if d := remote.RetryAfter(c.v, time.Minute); d < c.min || d > c.max {
			t.Errorf("RetryAfter(%q) = %s, want %s..%s", c.v, d, c.min, c.max)
		}
	}
}

func TestBackoffSpendsItsAttempts(t *testing.T) {
	b := remote.Retry{Attempts: 3, Base: time.Millisecond}.Backoff()
	ctx := context.Background()
	for want := 2; want <= 3; want++ {
		if more, err := b.Next(ctx, ""); !more || err != nil || b.Attempt() != want {
			t.Fatalf("attempt %d: %v %v (at %d)", want, more, err, b.Attempt())
		}
	}
	if more, err := b.Next(ctx, ""); more || err != nil {
		t.Fatalf("a fourth attempt of three: %v %v", more, err)
	}
	// A Retry-After longer than the backoff is waited out; a cancelled
	// context ends the wait at once.
	b = remote.Retry{Base: time.Millisecond}.Backoff()
	start := time.Now()
	if more, _ := b.Next(ctx, "1"); !more || time.Since(start) < 900*time.Millisecond {
		t.Fatalf("Retry-After 1 waited %s", time.Since(start))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Next(cctx, "30"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
}
