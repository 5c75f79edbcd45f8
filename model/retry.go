package model

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RetryPolicy says how failed attempts are retried. The zero value means
// DefaultRetry.
type RetryPolicy struct {
	// MaxAttempts bounds the tries, the first included (1: no retries).
	MaxAttempts int
	// BaseDelay is the first backoff; each retry doubles it, up to MaxDelay,
	// and waits a random ("full jitter") time up to that.
	BaseDelay, MaxDelay time.Duration
	// AttemptTimeout bounds one attempt (0: none); a timed-out attempt is
	// retried. The caller's ctx bounds the whole call.
	AttemptTimeout time.Duration
	// MaxRetryAfter caps how long a provider's Retry-After is honoured; a
	// longer one ends the call with the error.
	MaxRetryAfter time.Duration
}

// DefaultRetry: 4 attempts, 500 ms base, 20 s cap, Retry-After up to 60 s.
var DefaultRetry = RetryPolicy{MaxAttempts: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 20 * time.Second, MaxRetryAfter: time.Minute}

func (p RetryPolicy) orDefault() RetryPolicy {
	if p.MaxAttempts == 0 {
		return DefaultRetry
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = DefaultRetry.MaxRetryAfter
	}
	return p
}

// Retryable reports whether an attempt that failed with err (before any
// output) is worth repeating: HTTP 408, 409, 429 and 5xx, timeouts of the
// attempt, and connection errors.
func Retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status == http.StatusRequestTimeout || se.Status == http.StatusConflict ||
			se.Status == http.StatusTooManyRequests || se.Status >= 500
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// backoff is the wait before retry number n (1 for the first retry).
func (p RetryPolicy) backoff(n int, rng *rand.Rand) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	if d <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(d) + 1))
}

// ParseRetryAfter reads a Retry-After header (seconds or an HTTP date) or a
// retry-after-ms header; 0 if neither is usable.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
			return time.Duration(v * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
