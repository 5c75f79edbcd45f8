package opensandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
)

// execd is one sandbox's execd daemon: remote.Conn over its HTTP API.
type execd struct {
	id, base string
	http     *http.Client
	retry    remote.Retry
	// gone says whether the sandbox has ended (asked when execd cannot be
	// reached), with an error wrapping sandbox.ErrNotFound.
	gone func(ctx context.Context) error
}

// endpointHeaders adds the headers the endpoint named to every request
// (the gateway's and execd's access headers). The lifecycle API key is
// never among them.
type endpointHeaders struct {
	next    http.RoundTripper
	headers map[string]string
}

func (h *endpointHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.next.RoundTrip(r)
}

// newExecd reaches execd where the endpoint says: a host and path without
// a scheme (http is meant, as the SDKs read it).
func newExecd(c *http.Client, o Options, id string, ep endpoint, gone func(ctx context.Context) error) *execd {
	base := ep.Endpoint
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	hc := &http.Client{Transport: &endpointHeaders{next: c.Transport, headers: ep.Headers}}
	return &execd{id: id, base: strings.TrimSuffix(base, "/"), http: hc, retry: o.Retry, gone: gone}
}

// BinaryOutput implements remote.Conn: execd carries output as text
// lines.
func (e *execd) BinaryOutput() bool { return false }

// ready waits until execd answers its ping: a sandbox can be Running a
// moment before its execd listens.
func (e *execd) ready(ctx context.Context, timeout, poll time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := e.ping(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isStatus(err, http.StatusUnauthorized) || isStatus(err, http.StatusForbidden) {
			return fmt.Errorf("opensandbox: execd of sandbox %s refused the endpoint's access headers: %w", e.id, err)
		}
		if gerr := e.gone(ctx); gerr != nil {
			return gerr
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("opensandbox: execd of sandbox %s at %s did not answer within %s: %w", e.id, e.base, timeout, err)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (e *execd) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/ping", nil)
	if err != nil {
		return err
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		se, _ := readRefusal(resp)
		return se
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}

// send sends the request build makes, retrying refusals that prove it
// was not acted on (429 and 5xx: an answer came, and it was no) and
// connections that never opened, with backoff (Retry-After honoured) and
// after asking whether the sandbox is gone. An idempotent request is
// retried after any connection failure; another that failed after it may
// have been sent returns an error wrapping sandbox.ErrInterrupted. A
// response with another status is returned to the caller.
func (e *execd) send(ctx context.Context, idempotent bool, build func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	b := e.retry.Backoff()
	for {
		req, err := build(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := e.http.Do(req)
		var last error
		var after string
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !idempotent && !neverSent(err) {
				if gerr := e.gone(ctx); gerr != nil {
					return nil, fmt.Errorf("%w: sending the command: %v: %w", sandbox.ErrInterrupted, err, gerr)
				}
				return nil, fmt.Errorf("%w: sending the command: %v", sandbox.ErrInterrupted, err)
			}
			last = err
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			after = resp.Header.Get("Retry-After")
			last, _ = readRefusal(resp)
		default:
			return resp, nil
		}
		if gerr := e.gone(ctx); gerr != nil {
			return nil, gerr
		}
		more, werr := b.Next(ctx, after)
		if werr != nil {
			return nil, werr
		}
		if !more {
			return nil, fmt.Errorf("execd of sandbox %s: after %d attempts: %w", e.id, b.Attempt(), last)
		}
	}
}

// neverSent reports whether a request failed before a connection opened.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// codeFileNotFound is execd's error code for a missing file.
const codeFileNotFound = "FILE_NOT_FOUND"

// readRefusal reads a refusal's body — execd's {code, message}, its
// access check's {error}, or text — and closes it.
func readRefusal(resp *http.Response) (*remote.StatusError, string) {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(b))
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil {
		switch {
		case body.Message != "":
			msg = body.Message
		case body.Error != "":
			msg = body.Error
		case body.Code != "":
			msg = body.Code
		}
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &remote.StatusError{Status: resp.StatusCode, Message: msg}, body.Code
}

// refused reads a refusal: the sandbox's end if execd could not be
// reached through the endpoint, else the refusal.
func (e *execd) refused(ctx context.Context, resp *http.Response) error {
	se, code := readRefusal(resp)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("execd of sandbox %s refused the endpoint's access headers: %w", e.id, se)
	case resp.StatusCode == http.StatusNotFound && code != codeFileNotFound, resp.StatusCode >= 500:
		if gerr := e.gone(ctx); gerr != nil {
			return gerr
		}
	}
	return fmt.Errorf("execd of sandbox %s: %w", e.id, se)
}
