package client

import (
	"context"
	"iter"
	"net/url"
	"time"

	"github.com/openrath/rath/session"
)

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
