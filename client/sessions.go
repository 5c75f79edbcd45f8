package client

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strconv"
	"time"

	"github.com/openrath/rath/export"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Session is a stored session as GET /v1/sessions/{id} gives it.
type Session struct {
	store.Info
	Usage     session.Usage      `json:"usage"`
	Placement *session.Placement `json:"placement"`
	Children  []session.ID       `json:"children"`
}

// Created is what an operation that made a session answers.
type Created struct {
	ID   session.ID      `json:"id"`
	Head session.ChunkID `json:"head,omitempty"`
	Len  int             `json:"len"`
}

func sessionPath(id session.ID, rest string) string {
	return "/v1/sessions/" + url.PathEscape(string(id)) + rest
}

// Session returns the stored session id.
func (c *Client) Session(ctx context.Context, id session.ID) (*Session, error) {
	var s Session
	if err := c.call(ctx, request{method: "GET", path: sessionPath(id, "")}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// chunkPage is a page of GET /v1/sessions/{id}/chunks.
type chunkPage struct {
	Items      []session.Chunk `json:"items"`
	NextCursor string          `json:"next_cursor"`
	Len        int             `json:"len"`
}

// Chunks yields the chunks of session id in chain order, fetching them a
// page of at most 200 at a time; an error ends the sequence.
func (c *Client) Chunks(ctx context.Context, id session.ID) iter.Seq2[session.Chunk, error] {
	return func(yield func(session.Chunk, error) bool) {
		cursor := ""
		for {
			q := url.Values{"limit": {"200"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			var page chunkPage
			if err := c.call(ctx, request{method: "GET", path: sessionPath(id, "/chunks"), query: q}, &page); err != nil {
				yield(session.Chunk{}, err)
				return
			}
			for _, ch := range page.Items {
				if !yield(ch, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			cursor = page.NextCursor
		}
	}
}

// Graph returns the lineage graph of session id in format: json, dot,
// mermaid or svg.
func (c *Client) Graph(ctx context.Context, id session.ID, format string) ([]byte, error) {
	res, err := c.do(ctx, request{method: "GET", path: sessionPath(id, "/graph"), query: url.Values{"format": {format}}})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("client: read the graph of %s: %w", id, err)
	}
	return b, nil
}

// Export writes session id to w as a file in format: jsonl (ours) or
// openrath (OpenRath-Python's).
func (c *Client) Export(ctx context.Context, id session.ID, format string, w io.Writer) error {
	res, err := c.do(ctx, request{method: "GET", path: sessionPath(id, "/export"), query: url.Values{"format": {format}}})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(w, res.Body); err != nil {
		return fmt.Errorf("client: read the export of %s: %w", id, err)
	}
	return nil
}

// Fork forks the stored session id — whole, or its first at chunks if at
// is not negative — and returns the fork.
func (c *Client) Fork(ctx context.Context, id session.ID, at int) (Created, error) {
	body := map[string]int{}
	if at >= 0 {
		body["at"] = at
	}
	rd, err := jsonBody(body)
	if err != nil {
		return Created{}, err
	}
	var out Created
	err = c.call(ctx, request{method: "POST", path: sessionPath(id, "/fork"), body: rd, ctype: "application/json"}, &out)
	return out, err
}

// Import sends a session file (ours or OpenRath-Python's JSONL), which the
// server verifies and stores, and returns the session as stored.
func (c *Client) Import(ctx context.Context, file io.Reader) (Created, error) {
	var out Created
	err := c.call(ctx, request{method: "POST", path: "/v1/sessions:import", body: file, ctype: "application/x-ndjson"}, &out)
	return out, err
}

// itoa is strconv.Itoa, for event ids.
func itoa(n int) string { return strconv.Itoa(n) }

// Dossier returns the evidence dossier of session id.
func (c *Client) Dossier(ctx context.Context, id session.ID) (*export.DossierData, error) {
	var d export.DossierData
	if err := c.call(ctx, request{method: "GET", path: sessionPath(id, "/dossier")}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// SessionFilter selects sessions for Sessions; zero fields select all.
type SessionFilter struct {
	Status       []store.Status
	Op           string
	Labels       map[string]string
	Since, Until time.Time
	// Search keeps the sessions whose id contains it, in any case.
	Search string
}

// sessionPage is a page of GET /v1/sessions.
type sessionPage struct {
	Items      []store.Info `json:"items"`
	NextCursor string       `json:"next_cursor"`
}

// Sessions yields the stored sessions that f selects, newest first,
// fetching them a page of at most 200 at a time; an error ends the
// sequence.
func (c *Client) Sessions(ctx context.Context, f SessionFilter) iter.Seq2[store.Info, error] {
	q := url.Values{"limit": {"200"}}
	for _, st := range f.Status {
		q.Add("status", string(st))
	}
	if f.Op != "" {
		q.Set("op", f.Op)
	}
	for k, v := range f.Labels {
		q.Add("label", k+"="+v)
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.Format(time.RFC3339Nano))
	}
	if f.Search != "" {
		q.Set("q", f.Search)
	}
	return func(yield func(store.Info, error) bool) {
		for {
			var page sessionPage
			if err := c.call(ctx, request{method: "GET", path: "/v1/sessions", query: q}, &page); err != nil {
				yield(store.Info{}, err)
				return
			}
			for _, in := range page.Items {
				if !yield(in, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			q.Set("cursor", page.NextCursor)
		}
	}
}
