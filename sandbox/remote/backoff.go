package remote

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff paces one request's attempts as its Retry says: the first
// backoff is Base, doubled after each attempt up to Max, and a provider's
// Retry-After (up to MaxWait) is waited out when it is longer.
type Backoff struct {
	r       Retry
	wait    time.Duration
	attempt int
}

// Backoff starts the pacing of a request's attempts; the first attempt
// is under way.
func (r Retry) Backoff() *Backoff {
	return &Backoff{r: r, wait: cmpOr(r.Base, 200*time.Millisecond), attempt: 1}
}

// Attempt is the number of the attempt under way.
func (b *Backoff) Attempt() int { return b.attempt }

// Next waits before the next attempt and reports whether there is one:
// false when the attempts are spent, or ctx's error when it ended the
// wait. retryAfter is the refusal's Retry-After header ("" if none).
func (b *Backoff) Next(ctx context.Context, retryAfter string) (bool, error) {
	if b.attempt >= b.r.attempts() {
		return false, nil
	}
	d := max(b.wait, RetryAfter(retryAfter, cmpOr(b.r.MaxWait, time.Minute)))
	b.wait = min(2*b.wait, cmpOr(b.r.Max, 5*time.Second))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-t.C:
	}
	b.attempt++
	return true, nil
}

// RetryAfter reads a Retry-After header, seconds or an HTTP date, as a
// wait of at most most.
func RetryAfter(v string, most time.Duration) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
	}
	return max(0, min(d, most))
}
