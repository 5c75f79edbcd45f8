package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// ErrBadURL: New was given something other than an http(s) URL.
var ErrBadURL = errors.New("client: not an http(s) URL of a server")

// Client calls one server. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token string
	hc    *http.Client
}

// Option adjusts New.
type Option func(*Client)

// WithToken sends the server's bearer token with every request.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient makes the requests with hc (http.DefaultClient if not
// given). Event streams need a client without an overall timeout.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// New returns a client of the server at baseURL ("http://host:port").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadURL, baseURL)
	}
	c := &Client{base: u, hc: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// request is one call: method, path (with its query) and an optional body
// of the given content type.
type request struct {
	method, path string
	query        url.Values
	body         io.Reader
	ctype        string
	header       http.Header
}

// do makes the call and returns the response when its status is 2xx; any
// other status is read into an *Error.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	u := *c.base
	u.Path += r.path
	u.RawQuery = r.query.Encode()
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), r.body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	if res.StatusCode/100 == 2 {
		return res, nil
	}
	defer res.Body.Close()
	return nil, readError(res)
}

// call makes the call and decodes the JSON answer into v.
func (c *Client) call(ctx context.Context, r request, v any) error {
	res, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		return fmt.Errorf("client: %s %s: the answer is not the JSON expected: %w", r.method, r.path, err)
	}
	return nil
}

// jsonBody encodes v as a request body.
func jsonBody(v any) (io.Reader, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("client: encode the request: %w", err)
	}
	return bytes.NewReader(b), nil
}

// errBody bounds the error bodies read.
const errBody = 64 << 10

// readError turns a non-2xx answer into an *Error.
func readError(res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, errBody))
	e := &Error{Status: res.StatusCode, RequestID: res.Header.Get("X-Request-ID")}
	var body struct {
		Error struct {
			Code, Message, Reason string
			RequestID             string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &body); err == nil && body.Error.Code != "" {
		e.Code, e.Message, e.Reason = body.Error.Code, body.Error.Message, body.Error.Reason
		if body.Error.RequestID != "" {
			e.RequestID = body.Error.RequestID
		}
		return e
	}
	// Not the API's shape (a proxy's page, say): keep what it said.
	e.Code = codeOfStatus(res.StatusCode)
	e.Message = strings.TrimSpace(string(b))
	if e.Message == "" {
		e.Message = res.Status
	}
	return e
}
