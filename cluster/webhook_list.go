package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/openrath/rath/session"
)

// Delivery is one delivery of an event to a webhook: its River job and
// what came of it.
type Delivery struct {
	// ID is the delivery's job id (HeaderWebhookDelivery).
	ID    int64      `json:"id"`
	Event string     `json:"event"`
	Run   session.ID `json:"run"`
	// State is the run state delivered.
	State string `json:"state"`
	// Attempt is the attempts made so far.
	Attempt int `json:"attempt"`
	// Status is the last HTTP status received (0: none).
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Outcome is OutcomeDelivered, OutcomeRetrying, OutcomeFailed,
	// OutcomeUnsubscribed or OutcomePending.
	Outcome string `json:"outcome"`
	// At is when it was last attempted (or created, if never).
	At time.Time `json:"at"`
}

// deliveryScan bounds the jobs Deliveries looks through, newest first.
const (
	deliveryPage  = 500
	deliveryPages = 20
)

// Deliveries lists the webhook id's latest deliveries, newest first, up
// to limit (default 50). It reads River's jobs, which River deletes some
// time after they end (a day for delivered ones), and looks through the
// latest 10,000 deliveries of all webhooks. A removed webhook's deliveries
// still list.
func (c *Cluster) Deliveries(ctx context.Context, id session.ID, limit int) ([]Delivery, error) {
	if limit <= 0 {
		limit = 50
	}
	out := []Delivery{}
	p := river.NewJobListParams().Kinds(webhookKind).OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(deliveryPage)
	for range deliveryPages {
		res, err := c.q.jobs(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("cluster: deliveries of %s: %w", id, err)
		}
		for _, j := range res.Jobs {
			var a webhookArgs
			if err := json.Unmarshal(j.EncodedArgs, &a); err != nil || a.Webhook != id {
				continue
			}
			out = append(out, deliveryOf(j, a))
			if len(out) == limit {
				return out, nil
			}
		}
		if len(res.Jobs) < deliveryPage {
			break
		}
		p = p.After(res.LastCursor)
	}
	return out, nil
}

// deliveryOf reads a delivery from its job.
func deliveryOf(j *rivertype.JobRow, a webhookArgs) Delivery {
	d := Delivery{ID: j.ID, Event: a.Event, Run: a.Run, State: string(a.State), Attempt: j.Attempt, At: j.CreatedAt}
	if j.AttemptedAt != nil {
		d.At = *j.AttemptedAt
	}
	var o webhookOutput
	if raw := j.Output(); len(raw) > 0 {
		_ = json.Unmarshal(raw, &o)
	}
	// Only a category of what went wrong (webhook_outcome.go): River's
	// errors are the operator's.
	d.Status, d.Error = o.Status, publicError(o.Error)
	if len(j.Errors) > 0 && d.Error == "" {
		d.Error = deliveryFailed
	}
	switch j.State {
	case rivertype.JobStateCompleted:
		d.Outcome = o.Outcome
		if d.Outcome == "" || d.Outcome == OutcomeRetrying {
			d.Outcome = OutcomeDelivered
		}
		if d.Outcome != OutcomeFailed {
			d.Error = ""
		}
	case rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		d.Outcome = OutcomeFailed
	case rivertype.JobStateRetryable:
		d.Outcome = OutcomeRetrying
	default: // available, scheduled, pending, running
		d.Outcome = OutcomePending
		if j.Attempt > 0 && j.State != rivertype.JobStateRunning {
			d.Outcome = OutcomeRetrying
		}
	}
	return d
}
