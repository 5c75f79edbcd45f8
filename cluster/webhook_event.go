package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/openrath/rath/session"
)

// webhookKind is the River job kind of a webhook delivery.
const webhookKind = "rath.webhook"

// WebhookQueue is the River queue deliveries wait in; every worker works
// it.
const WebhookQueue = "rath_webhooks"

// webhookAttempts bounds a delivery's attempts (the first and its
// retries).
const webhookAttempts = 8

// webhookArgs are a delivery's arguments: the event, and the run's record
// as it was when its state changed.
type webhookArgs struct {
	Webhook session.ID      `json:"webhook"`
	URL     string          `json:"url"`
	Event   string          `json:"event"`
	Run     session.ID      `json:"run"`
	State   State           `json:"state"`
	At      time.Time       `json:"at"`
	Record  json.RawMessage `json:"record"`
}

// Kind implements river.JobArgs.
func (webhookArgs) Kind() string { return webhookKind }

// webhookTTL is how long a process trusts its list of webhooks.
const webhookTTL = time.Second

// webhookCache is a process's recent list of webhooks, so that a state
// change costs no store query while none (or the same ones) exist.
type webhookCache struct {
	mu    sync.Mutex
	at    time.Time
	hooks []Webhook
}

// get returns the webhooks, listing them when the list is older than
// webhookTTL.
func (wc *webhookCache) get(ctx context.Context, c *Cluster) ([]Webhook, error) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if !wc.at.IsZero() && time.Since(wc.at) < webhookTTL {
		return wc.hooks, nil
	}
	hs, err := c.webhooks(ctx)
	if err != nil {
		return nil, err
	}
	wc.hooks, wc.at = hs, time.Now()
	return hs, nil
}

// reset forgets the list (after this process added or removed a webhook).
func (wc *webhookCache) reset() {
	wc.mu.Lock()
	wc.at = time.Time{}
	wc.mu.Unlock()
}

// runEvent enqueues a delivery of the run's state, as just saved, to each
// webhook that wants it. It is called after the state is written, not in
// its transaction: a process that dies between the two loses the event.
// Failures are logged, never returned: a webhook never holds up a run.
func (c *Cluster) runEvent(ctx context.Context, run *Run) {
	ctx = context.WithoutCancel(ctx)
	hs, err := c.hooks.get(ctx, c)
	if err != nil {
		c.log.Warn("webhooks: list", "run", run.ID, "err", err)
		return
	}
	if len(hs) == 0 {
		return
	}
	var params []river.InsertManyParams
	var rec json.RawMessage
	for _, h := range hs {
		if !h.wants(run.State) || !c.hears(ctx, &h, run) {
			continue
		}
		if rec == nil {
			if rec, err = json.Marshal(run); err != nil {
				c.log.Warn("webhooks: encode run", "run", run.ID, "err", err)
				return
			}
		}
		params = append(params, river.InsertManyParams{
			Args:       webhookArgs{Webhook: h.ID, URL: RedactURL(h.URL), Event: EventRunState, Run: run.ID, State: run.State, At: run.Since, Record: rec},
			InsertOpts: &river.InsertOpts{Queue: WebhookQueue, MaxAttempts: webhookAttempts},
		})
	}
	if len(params) == 0 {
		return
	}
	if err := c.q.insertMany(ctx, params); err != nil {
		c.log.Warn("webhooks: enqueue", "run", run.ID, "state", run.State, "err", err)
	}
}

// runEvents is runEvent for each of runs.
func (c *Cluster) runEvents(ctx context.Context, runs []*prepared) {
	for _, p := range runs {
		c.runEvent(ctx, p.run)
	}
}

func (q *rq[TTx]) insertMany(ctx context.Context, params []river.InsertManyParams) error {
	if _, err := q.client.InsertMany(ctx, params); err != nil {
		return fmt.Errorf("cluster: enqueue: %w", err)
	}
	return nil
}

func (q *rq[TTx]) jobs(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error) {
	return q.client.JobList(ctx, p)
}

// webhookWorkers is how many deliveries a worker makes at once.
const webhookWorkers = 4
