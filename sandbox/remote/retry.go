package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ErrAPI: a provider's API refused a request (the error says its status
// and message).
var ErrAPI = errors.New("remote sandbox API")

// Retry says how requests to a provider are retried.
type Retry struct {
	// Attempts is how many times a request is tried (0: 5).
	Attempts int
	// Base is the first backoff (0: 200ms), doubled each time up to Max
	// (0: 5s); a Retry-After header is honoured up to MaxWait (0: 60s).
	Base, Max, MaxWait time.Duration
}

func (r Retry) attempts() int { return cmpOr(r.Attempts, 5) }

func cmpOr[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// StatusError is an API's refusal: its HTTP status and message.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", ErrAPI, e.Status, e.Message)
}

func (e *StatusError) Unwrap() error { return ErrAPI }

// Do sends the request that build makes, retrying with backoff on 429,
// 5xx and connection failures before any response (Retry-After honoured).
// A response with another status is returned to the caller; one still
// failing after the last attempt becomes a *StatusError. build is called
// for every attempt, so a request's body is fresh each time. Do is for
// requests that are safe to send again (a create is retried only on
// refusals that come before the provider acts: 429 and 5xx).
func Do(ctx context.Context, c *http.Client, r Retry, build func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	b := r.Backoff()
	for {
		req, err := build(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		var last error
		var after string
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = err
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			after = resp.Header.Get("Retry-After")
			last = ReadError(resp)
		default:
			return resp, nil
		}
		more, werr := b.Next(ctx, after)
		if werr != nil {
			return nil, werr
		}
		if !more {
			return nil, fmt.Errorf("after %d attempts: %w", b.Attempt(), last)
		}
	}
}

// ReadError reads a refusal's body (JSON {"message"} or text) into a
// *StatusError and closes it.
func ReadError(resp *http.Response) error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(b))
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &body) == nil && body.Message != "" {
		msg = body.Message
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &StatusError{Status: resp.StatusCode, Message: msg}
}

// JSON sends a JSON request with Do and decodes a success into out (nil:
// discard). Statuses other than want are errors.
func JSON(ctx context.Context, c *http.Client, r Retry, method, url string, header http.Header, in, out any, want ...int) (*http.Response, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, err
		}
	}
	resp, err := Do(ctx, c, r, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		return req, nil
	})
	if err != nil {
		return nil, err
	}
	ok := len(want) == 0 && resp.StatusCode/100 == 2
	for _, w := range want {
		ok = ok || resp.StatusCode == w
	}
	if !ok {
		return resp, ReadError(resp)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out); err != nil {
			return resp, fmt.Errorf("%w: HTTP %d with a malformed body: %v", ErrAPI, resp.StatusCode, err)
		}
	}
	return resp, nil
}
