package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/session"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"150"}, "Retry-After": {"9"}}, 150 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-4"}}, 0},
		{http.Header{}, 0},
	}
	for _, c := range cases {
		if got := ParseRetryAfter(c.h, now); got != c.want {
			t.Errorf("%v: got %s, want %s", c.h, got, c.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	yes := []error{
		&StatusError{Status: 408}, &StatusError{Status: 409}, &StatusError{Status: 429}, &StatusError{Status: 500},
		&StatusError{Status: 529}, fmt.Errorf("read: %w", io.ErrUnexpectedEOF), syscall.ECONNRESET,
		fmt.Errorf("attempt: %w", context.DeadlineExceeded),
	}
	no := []error{&StatusError{Status: 400}, &StatusError{Status: 401}, &StatusError{Status: 404},
		context.Canceled, ErrMalformed, errors.New("something else")}
	for _, e := range yes {
		if !Retryable(e) {
			t.Errorf("%v should be retried", e)
		}
	}
	for _, e := range no {
		if Retryable(e) {
			t.Errorf("%v should not be retried", e)
		}
	}
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 8; n++ {
		ceiling := min(100*time.Millisecond<<(n-1), time.Second)
		for range 50 {
			if d := p.backoff(n, rng); d < 0 || d > ceiling {
				t.Fatalf("retry %d waited %s, ceiling %s", n, d, ceiling)
			}
		}
	}
}

func TestDigestTracksTheRequest(t *testing.T) {
	base := func() *Request {
		return &Request{Model: "m", Messages: []session.Message{{Role: session.RoleUser, Content: "hi"}, {Role: session.RoleAssistant, Content: "yo", Chunk: "sha256:aa"}},
			Tools: []ToolSpec{{Name: "t", Parameters: []byte(`{"type":"object"}`)}}}
	}
	d := base().Digest()
	if d == "" || base().Digest() != d {
		t.Fatal("digest not stable")
	}
	changes := []func(r *Request){
		func(r *Request) { r.Model = "n" },
		func(r *Request) { r.Messages[0].Content = "hi!" },
		func(r *Request) { r.Messages[1].Chunk = "sha256:bb" },
		func(r *Request) { r.Tools[0].Name = "u" },
		func(r *Request) { r.Params.MaxTokens = 5 },
		func(r *Request) { r.Messages = r.Messages[:1] },
	}
	for i, ch := range changes {
		r := base()
		ch(r)
		if r.Digest() == d {
			t.Errorf("change %d left the digest unchanged", i)
		}
	}
}
