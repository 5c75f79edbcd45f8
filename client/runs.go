package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
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
}

// ReviewRun settles the calls run id waits on.
func (c *Client) ReviewRun(ctx context.Context, id session.ID, rv Review) (*Run, error) {
	return c.control(ctx, runPath(id, "/review"), rv)
}

// Approval is a run waiting for a person's verdict.
type Approval struct {
	Run      session.ID `json:"run"`
	Workflow string     `json:"workflow"`
	Since    time.Time  `json:"since"`
	Created  time.Time  `json:"created"`
	// Session is the session the run paused with; Head its head, which a
	// verdict names so that it cannot land on a later approval.
	Session session.ID      `json:"session"`
	Head    session.ChunkID `json:"head"`
	// Asks are what waits for the verdict.
	Asks []string `json:"asks"`
}

// Approvals yields the runs waiting for a verdict (f's State is not
// used), newest first.
func (c *Client) Approvals(ctx context.Context, f RunFilter) iter.Seq2[Approval, error] {
	f.State = ""
	return pages[Approval](ctx, c, "/v1/approvals", f.query())
}

// Verdict is a person's verdict on an approval.
type Verdict struct {
	Approve bool
	By      string
	Reason  string
	// Head, if set, is the paused session's head the verdict is for.
	Head session.ChunkID
}

// Decide records a verdict on the approval run id waits for and returns
// the run as it is after it.
func (c *Client) Decide(ctx context.Context, id session.ID, v Verdict) (*Run, error) {
	body := struct {
		Verdict string          `json:"verdict"`
		By      string          `json:"by"`
		Reason  string          `json:"reason,omitempty"`
		Head    session.ChunkID `json:"head,omitempty"`
	}{"deny", v.By, v.Reason, v.Head}
	if v.Approve {
		body.Verdict = "approve"
	}
	return c.control(ctx, "/v1/approvals/"+url.PathEscape(string(id)), body)
}

// Worker is a cluster worker as the API shows it.
type Worker struct {
	ID          string            `json:"id"`
	Session     session.ID        `json:"session"`
	Host        string            `json:"host"`
	PID         int               `json:"pid"`
	Pool        string            `json:"pool"`
	Offers      map[string]string `json:"offers,omitempty"`
	Serves      []string          `json:"serves"`
	Concurrency int               `json:"concurrency"`
	Started     time.Time         `json:"started"`
	Beat        time.Time         `json:"beat"`
	Runs        []session.ID      `json:"runs,omitempty"`
	Holding     int               `json:"holding"`
	State       string            `json:"state"`
	Alive       bool              `json:"alive"`
	Why         string            `json:"why,omitempty"`
}

// Workers returns the workers that have not ended, then the latest that
// ended.
func (c *Client) Workers(ctx context.Context) ([]Worker, error) {
	var out struct {
		Items []Worker `json:"items"`
	}
	err := c.call(ctx, request{method: "GET", path: "/v1/workers"}, &out)
	return out.Items, err
}

// Queue is one pool of workers and its depths.
type Queue struct {
	Queue   string            `json:"queue"`
	Offers  map[string]string `json:"offers,omitempty"`
	Serves  []string          `json:"serves,omitempty"`
	Workers []string          `json:"workers"`
	Queued  int               `json:"queued"`
	Running int               `json:"running"`
}

// Queues returns the cluster's pools.
func (c *Client) Queues(ctx context.Context) ([]Queue, error) {
	var out struct {
		Items []Queue `json:"items"`
	}
	err := c.call(ctx, request{method: "GET", path: "/v1/queues"}, &out)
	return out.Items, err
}

// RunEvents returns the event stream of run id: its state ("run" events,
// whose data is a Run), the chunks of its sessions as they are committed
// (named by what they are: "step", "tool_call", "tool_result",
// "approval", ...; read them with RunChunk), then "end" when it is over.
// after is the id of the last event a reader had ("" for the start). Read
// it with All.
func (c *Client) RunEvents(ctx context.Context, id session.ID, after string) *Stream {
	return &Stream{c: c, ctx: ctx, path: runPath(id, "/events"), retry: 200 * time.Millisecond, last: after}
}

// RunChunkEvent is the data of a run stream's chunk event: the session the
// chunk is in, its index there, its kind and the chunk.
type RunChunkEvent struct {
	Session session.ID    `json:"session"`
	Index   int           `json:"index"`
	Kind    session.Kind  `json:"kind"`
	Chunk   session.Chunk `json:"chunk"`
}

// RunChunk decodes a run stream's chunk event (any event but run, live,
// end and error).
func (e Event) RunChunk() (RunChunkEvent, error) {
	var c RunChunkEvent
	switch e.Name {
	case "run", "live", "end", "error":
		return c, fmt.Errorf("client: a %q event is not a chunk", e.Name)
	}
	if err := json.Unmarshal(e.Data, &c); err != nil {
		return c, fmt.Errorf("client: %s event: %w", e.Name, err)
	}
	return c, nil
}

// Run decodes a run stream's "run" event.
func (e Event) Run() (*Run, error) {
	if e.Name != "run" {
		return nil, fmt.Errorf("client: a %q event is not a run", e.Name)
	}
	var r Run
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return nil, fmt.Errorf("client: run event: %w", err)
	}
	return &r, nil
}

// Schedule starts a workflow on a cron expression.
type Schedule struct {
	Name     string            `json:"name"`
	Workflow string            `json:"workflow"`
	Cron     string            `json:"cron"`
	Input    *string           `json:"input,omitempty"`
	Needs    map[string]string `json:"needs,omitempty"`
	Paused   bool              `json:"paused"`
	// Next is its next tick; Last and LastRun its last fire.
	Next    time.Time  `json:"next,omitzero"`
	Last    time.Time  `json:"last,omitzero"`
	LastRun session.ID `json:"last_run,omitempty"`
}

// Schedules returns the cluster's schedules, by name.
func (c *Client) Schedules(ctx context.Context) ([]Schedule, error) {
	var out struct {
		Items []Schedule `json:"items"`
	}
	err := c.call(ctx, request{method: "GET", path: "/v1/schedules"}, &out)
	return out.Items, err
}

// AddSchedule adds a schedule (its Name, Workflow, Cron and optionally
// Input, Needs and Paused) and returns it with its next tick.
func (c *Client) AddSchedule(ctx context.Context, s Schedule) (*Schedule, error) {
	body := struct {
		Name     string            `json:"name"`
		Workflow string            `json:"workflow"`
		Cron     string            `json:"cron"`
		Input    *string           `json:"input,omitempty"`
		Needs    map[string]string `json:"needs,omitempty"`
		Paused   bool              `json:"paused,omitempty"`
	}{s.Name, s.Workflow, s.Cron, s.Input, s.Needs, s.Paused}
	return scheduleCall(ctx, c, "/v1/schedules", body)
}

// PauseSchedule pauses (or, with paused false, resumes) schedule name.
func (c *Client) PauseSchedule(ctx context.Context, name string, paused bool) (*Schedule, error) {
	verb := "/resume"
	if paused {
		verb = "/pause"
	}
	return scheduleCall(ctx, c, "/v1/schedules/"+url.PathEscape(name)+verb, struct{}{})
}

// RemoveSchedule removes schedule name.
func (c *Client) RemoveSchedule(ctx context.Context, name string) error {
	res, err := c.do(ctx, request{method: "DELETE", path: "/v1/schedules/" + url.PathEscape(name)})
	if err != nil {
		return err
	}
	return res.Body.Close()
}

func scheduleCall(ctx context.Context, c *Client, path string, body any) (*Schedule, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var s Schedule
	if err := c.call(ctx, request{method: "POST", path: path, body: bytes.NewReader(b), ctype: "application/json"}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
