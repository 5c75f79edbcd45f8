package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/openrath/rath/session"
)

// Run is a run on the cluster as the API shows it.
type Run struct {
	ID       session.ID        `json:"id"`
	Workflow string            `json:"workflow"`
	State    string            `json:"state"`
	Needs    map[string]string `json:"needs,omitempty"`
	Input    *string           `json:"input,omitempty"`
	// Pool is the queue the run is routed to; Why says why (or why none).
	Pool     string `json:"pool,omitempty"`
	Why      string `json:"why,omitempty"`
	Revision string `json:"revision,omitempty"`
	// Worker holds the run (running) or last held it, since Since.
	Worker  string    `json:"worker,omitempty"`
	Since   time.Time `json:"since"`
	Created time.Time `json:"created"`
	Slices  int       `json:"slices,omitempty"`
	// Ledger is the session of its routing and takeover decisions.
	Ledger session.ID `json:"ledger,omitempty"`
	// Output is its output session once done, or the session paused for
	// approval.
	Output session.ID `json:"output,omitempty"`
	// Review is the calls whose effect is unknown (needs_review), as JSON.
	Review json.RawMessage `json:"review,omitempty"`
	Pinned string          `json:"pinned,omitempty"`
	Host   string          `json:"host,omitempty"`
	Placed string          `json:"placed,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Cancel is who asked for a cancel, and why.
	Cancel string `json:"cancel,omitempty"`
	// Session is the session the run continues, if it was submitted on
	// one; Behind is the earlier run on it the run waits for (behind).
	Session session.ID `json:"session,omitempty"`
	Behind  session.ID `json:"behind,omitempty"`
	// Tenant and Project are the scope the run belongs to.
	Tenant  string `json:"tenant,omitempty"`
	Project string `json:"project,omitempty"`
	// Holder is the worker process holding the run; Displaced, those taken
	// for dead while they held it, kept until the run is settled; Previous
	// says of a run in needs_review whether each may still exist.
	Holder    *RunHolder       `json:"holder,omitempty"`
	Displaced []RunHolder      `json:"displaced,omitempty"`
	Previous  []RunHolderState `json:"previous,omitempty"`
}

// Final reports whether the run is over.
func (r *Run) Final() bool { return r.State == "done" || r.State == "failed" || r.State == "cancelled" }

// RunRequest is a run to submit.
type RunRequest struct {
	Workflow string            `json:"workflow"`
	Input    *string           `json:"input,omitempty"`
	Needs    map[string]string `json:"needs,omitempty"`
	Session  session.ID        `json:"session,omitempty"`
	// Key is the Idempotency-Key: the same key and request give the same
	// run back. SubmitRun makes one when it is empty.
	Key string `json:"-"`
}

// submitTries bounds the attempts of SubmitRun when the connection fails
// or the server is briefly unavailable.
const submitTries = 4

// SubmitRun submits a run and returns it, queued. Under its Idempotency-Key
// (req.Key, or one made for the call) a submission the connection lost is
// sent again without starting a second run: SubmitRun retries, with
// backoff, when the request did not get an answer or the server was
// unavailable.
func (c *Client) SubmitRun(ctx context.Context, req RunRequest) (*Run, error) {
	if req.Key == "" {
		req.Key = "rath-client-" + rand.Text()
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var run Run
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		r := request{method: "POST", path: "/v1/runs", body: bytes.NewReader(b), ctype: "application/json", header: http.Header{"Idempotency-Key": {req.Key}}}
		err = c.call(ctx, r, &run)
		var apiErr *Error
		if err == nil || try == submitTries || ctx.Err() != nil || (errors.As(err, &apiErr) && apiErr.Code != "unavailable") {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
	if err != nil {
		return nil, err
	}
	return &run, nil
}

func runPath(id session.ID, rest string) string {
	return "/v1/runs/" + url.PathEscape(string(id)) + rest
}

// Run returns run id.
func (c *Client) Run(ctx context.Context, id session.ID) (*Run, error) {
	var r Run
	if err := c.call(ctx, request{method: "GET", path: runPath(id, "")}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// RunFilter selects runs for Runs and Approvals; zero fields select all.
type RunFilter struct {
	State, Workflow string
	Since, Until    time.Time
}

func (f RunFilter) query() url.Values {
	q := url.Values{"limit": {"200"}}
	if f.State != "" {
		q.Set("state", f.State)
	}
	if f.Workflow != "" {
		q.Set("workflow", f.Workflow)
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.Format(time.RFC3339Nano))
	}
	return q
}

// Runs yields the runs f selects, newest first, a page of at most 200 at
// a time; an error ends the sequence.
func (c *Client) Runs(ctx context.Context, f RunFilter) iter.Seq2[Run, error] {
	return pages[Run](ctx, c, "/v1/runs", f.query())
}

// pages yields the items of a paged list.
func pages[T any](ctx context.Context, c *Client, path string, q url.Values) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			var page struct {
				Items      []T    `json:"items"`
				NextCursor string `json:"next_cursor"`
			}
			if err := c.call(ctx, request{method: "GET", path: path, query: q}, &page); err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range page.Items {
				if !yield(it, nil) {
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

// control posts a run's control and returns the run as it is after it.
func (c *Client) control(ctx context.Context, path string, body any) (*Run, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := c.call(ctx, request{method: "POST", path: path, body: bytes.NewReader(b), ctype: "application/json"}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// who is the body of a cancel or a resume.
type who struct {
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// CancelRun asks for run id to stop; by and reason are recorded. The run
// is cancelled, or cancelling until its worker stops it.
func (c *Client) CancelRun(ctx context.Context, id session.ID, by, reason string) (*Run, error) {
	return c.control(ctx, runPath(id, "/cancel"), who{by, reason})
}

// ResumeRun takes failed or cancelled run id back to work from its
// committed steps.
func (c *Client) ResumeRun(ctx context.Context, id session.ID, by, reason string) (*Run, error) {
	return c.control(ctx, runPath(id, "/resume"), who{by, reason})
}

// Review settles the calls a run in needs_review waits on.
type Review struct {
	// Verdict is happened, not_happened or aborted.
	Verdict string `json:"verdict"`
	Result  string `json:"result,omitempty"`
	Call    string `json:"call,omitempty"`
	By      string `json:"by"`
	Reason  string `json:"reason,omitempty"`
	// Force settles not_happened even while a worker that ran the call
	// may still exist: its effect may then happen twice.
	Force bool `json:"force,omitempty"`
}

// ReviewRun settles the calls run id waits on.
func (c *Client) ReviewRun(ctx context.Context, id session.ID, rv Review) (*Run, error) {
	return c.control(ctx, runPath(id, "/review"), rv)
}

// RunHolder is a worker process that held a run.
type RunHolder struct {
	Worker  string     `json:"worker"`
	Host    string     `json:"host"`
	PID     int        `json:"pid"`
	Session session.ID `json:"session"`
	Lock    int64      `json:"lock,omitempty"`
}

// RunHolderState is what can be told of a displaced holder now: whether
// its process may still run (or wake) and finish a call it was in, and how
// that was told.
type RunHolderState struct {
	RunHolder
	MayExist bool   `json:"may_exist"`
	Why      string `json:"why"`
}
