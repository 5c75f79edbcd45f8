package client

import (
	"context"
	"net/url"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Comparison is what GET /v1/sessions:compare answers: how many leading
// chunks two sessions share, and each one's chunks after them.
type Comparison struct {
	A      store.Info `json:"a"`
	B      store.Info `json:"b"`
	Prefix int        `json:"prefix"`
	// ASuffix and BSuffix are each session's chunks after the prefix.
	ASuffix Suffix `json:"a_suffix"`
	BSuffix Suffix `json:"b_suffix"`
}

// Suffix is one session's chunks after a common prefix.
type Suffix struct {
	// From is the index of the first chunk.
	From   int             `json:"from"`
	Chunks []session.Chunk `json:"chunks"`
	// Truncated says the session has more chunks than were returned.
	Truncated bool `json:"truncated"`
}

// Compare compares sessions a and b: their common prefix and each one's
// chunks after it, at most limit of each (the server's default, 500, if
// limit is not positive).
func (c *Client) Compare(ctx context.Context, a, b session.ID, limit int) (*Comparison, error) {
	q := url.Values{"a": {string(a)}, "b": {string(b)}}
	if limit > 0 {
		q.Set("limit", itoa(limit))
	}
	var out Comparison
	if err := c.call(ctx, request{method: "GET", path: "/v1/sessions:compare", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Merge merges stored session b into stored session a and returns the
// merge, committed. Sessions placed on sandboxes that cannot merge are
// ErrConflict.
func (c *Client) Merge(ctx context.Context, a, b session.ID) (Created, error) {
	rd, err := jsonBody(map[string]session.ID{"a": a, "b": b})
	if err != nil {
		return Created{}, err
	}
	var out Created
	err = c.call(ctx, request{method: "POST", path: "/v1/sessions:merge", body: rd, ctype: "application/json"}, &out)
	return out, err
}
