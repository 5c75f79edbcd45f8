// Package clusterapi serves the Agent Cluster through the Agent Server:
// the server.Runs of a cluster.Cluster, its errors told apart by the kinds
// the server answers with. (Package server cannot import cluster, which
// sits above it; this package joins the two.)
package clusterapi

import (
	"context"
	"errors"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/server"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// New returns /v1's view of cl.
func New(cl *cluster.Cluster) server.Runs { return clusterRuns{cl} }

// clusterRuns is /v1's view of the cluster (server.Runs): the cluster's
// calls, with its errors told apart by the kinds the server answers with.
type clusterRuns struct{ cl *cluster.Cluster }

func (c clusterRuns) Submit(ctx context.Context, req server.RunRequest) (server.RunView, bool, error) {
	o := cluster.SubmitOptions{Input: req.Input, Needs: req.Needs, Key: req.Key, Tenant: req.Tenant, Session: req.Session}
	var id session.ID
	var replayed bool
	var err error
	if req.Key != "" {
		id, replayed, err = c.cl.SubmitKeyed(ctx, req.Workflow, o)
	} else {
		id, err = c.cl.Submit(ctx, req.Workflow, o)
	}
	if err != nil {
		return server.RunView{}, false, kindOf(err)
	}
	v, err := c.Run(ctx, id)
	return v, replayed, err
}

func (c clusterRuns) ListRuns(ctx context.Context, q server.RunQuery) ([]server.RunView, error) {
	runs, err := c.cl.ListRuns(ctx, runFilter(q))
	if err != nil {
		return nil, kindOf(err)
	}
	out := make([]server.RunView, len(runs))
	for i := range runs {
		out[i] = server.RunView{ID: runs[i].ID, State: string(runs[i].State), Created: runs[i].Created, Body: &runs[i]}
	}
	return out, nil
}

func (c clusterRuns) Run(ctx context.Context, id session.ID) (server.RunView, error) {
	r, err := c.cl.RunInfo(ctx, id)
	if err != nil {
		return server.RunView{}, kindOf(err)
	}
	return server.RunView{ID: r.ID, State: string(r.State), Created: r.Created, Body: r}, nil
}

func (c clusterRuns) Cancel(ctx context.Context, id session.ID, by, reason string) error {
	return kindOf(c.cl.Cancel(ctx, id, by, reason))
}

func (c clusterRuns) Resume(ctx context.Context, id session.ID, by, reason string) error {
	return kindOf(c.cl.Resume(ctx, id, by, reason))
}

func (c clusterRuns) Review(ctx context.Context, id session.ID, req server.ReviewRequest) error {
	return kindOf(c.cl.Review(ctx, id, cluster.ReviewOptions{Verdict: req.Verdict, Result: req.Result, CallID: req.Call, By: req.By, Reason: req.Reason}))
}

func (c clusterRuns) Approvals(ctx context.Context, q server.RunQuery) ([]server.RunView, error) {
	as, err := c.cl.Approvals(ctx, runFilter(q))
	if err != nil {
		return nil, kindOf(err)
	}
	out := make([]server.RunView, len(as))
	for i := range as {
		out[i] = server.RunView{ID: as[i].Run, State: string(cluster.StateWaitingApproval), Created: as[i].Created, Body: &as[i]}
	}
	return out, nil
}

func (c clusterRuns) Decide(ctx context.Context, id session.ID, v server.Verdict) error {
	return kindOf(c.cl.ApproveAt(ctx, id, v.Head, v.Verdict == "approve", v.By, v.Reason))
}

// Queued counts every waiting run: runs carry no tenant yet, so all are
// the default tenant's.
func (c clusterRuns) Queued(ctx context.Context, _ string) (int, error) {
	return c.cl.Queued(ctx)
}

func (c clusterRuns) Workers(ctx context.Context) (any, error) {
	ws, err := c.cl.Workers(ctx)
	if ws == nil {
		ws = []cluster.WorkerInfo{}
	}
	return ws, err
}

func (c clusterRuns) Queues(ctx context.Context) (any, error) {
	return c.cl.Queues(ctx)
}

func (c clusterRuns) RunSessions(ctx context.Context, id session.ID) ([]session.ID, error) {
	ids, err := c.cl.RunSessions(ctx, id)
	return ids, kindOf(err)
}

func (c clusterRuns) RunOwner(info store.Info) session.ID { return cluster.RunOwner(info) }

func (c clusterRuns) Schedules(ctx context.Context) (any, error) {
	ss, err := c.cl.Schedules(ctx)
	if ss == nil {
		ss = []cluster.Schedule{}
	}
	return ss, kindOf(err)
}

func (c clusterRuns) AddSchedule(ctx context.Context, req server.ScheduleRequest) (any, error) {
	sc, err := c.cl.AddSchedule(ctx, cluster.Schedule{Name: req.Name, Workflow: req.Workflow, Cron: req.Cron, Input: req.Input, Needs: req.Needs, Paused: req.Paused})
	return sc, kindOf(err)
}

func (c clusterRuns) PauseSchedule(ctx context.Context, name string, paused bool) (any, error) {
	sc, err := c.cl.PauseSchedule(ctx, name, paused)
	return sc, kindOf(err)
}

func (c clusterRuns) RemoveSchedule(ctx context.Context, name string) error {
	return kindOf(c.cl.RemoveSchedule(ctx, name))
}

func (c clusterRuns) Webhooks(ctx context.Context) (any, error) {
	hs, err := c.cl.Webhooks(ctx)
	if hs == nil {
		hs = []cluster.Webhook{}
	}
	return hs, kindOf(err)
}

// newWebhook is a webhook as it is added: with its secret, shown once.
type newWebhook struct {
	*cluster.Webhook
	Secret string `json:"secret"`
}

func (c clusterRuns) AddWebhook(ctx context.Context, req server.WebhookRequest) (any, error) {
	h, err := c.cl.AddWebhook(ctx, req.URL, req.Events)
	if err != nil {
		return nil, kindOf(err)
	}
	return newWebhook{Webhook: h, Secret: h.Secret}, nil
}

func (c clusterRuns) RemoveWebhook(ctx context.Context, id session.ID) error {
	return kindOf(c.cl.RemoveWebhook(ctx, id))
}

func (c clusterRuns) Deliveries(ctx context.Context, id session.ID, limit int) (any, error) {
	ds, err := c.cl.Deliveries(ctx, id, limit)
	if ds == nil {
		ds = []cluster.Delivery{}
	}
	return ds, kindOf(err)
}

func (c clusterRuns) Deltas(ctx context.Context, id session.ID) (<-chan server.RunDelta, error) {
	in, err := c.cl.WatchDeltas(ctx, id)
	if err != nil {
		return nil, kindOf(err)
	}
	out := make(chan server.RunDelta, cap(in))
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case d := <-in:
				select {
				case out <- server.RunDelta{Agent: d.Agent, Step: d.Step, Text: d.Text}:
				default: // a slow reader loses deltas
				}
			}
		}
	}()
	return out, nil
}

// runFilter is q as the cluster lists runs.
func runFilter(q server.RunQuery) cluster.RunFilter {
	return cluster.RunFilter{State: cluster.State(q.State), Workflow: q.Workflow, Since: q.Since, Until: q.Until, Limit: q.Limit}
}

// kindOf marks the cluster's errors with the kinds the server answers
// with: not a run is not found, a run in the wrong state a conflict, a
// request the cluster cannot act on invalid.
func kindOf(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrNotARun), errors.Is(err, cluster.ErrNoSchedule), errors.Is(err, cluster.ErrNoWebhook):
		return apiErr(err, store.ErrNotFound)
	case errors.Is(err, cluster.ErrScheduleExists):
		return apiErr(err, store.ErrConflict)
	case errors.Is(err, cluster.ErrBadSchedule), errors.Is(err, cluster.ErrBadWebhook):
		return apiErr(err, server.ErrInvalid)
	case errors.Is(err, cluster.ErrNotWaiting), errors.Is(err, cluster.ErrFinal), errors.Is(err, cluster.ErrNotResumable):
		return apiErr(err, store.ErrConflict)
	case errors.Is(err, cluster.ErrKeyReused):
		return apiErr(err, server.ErrKeyReused)
	case errors.Is(err, cluster.ErrNoInput), errors.Is(err, rath.ErrUnknownWorkflow), errors.Is(err, cluster.ErrBadFilter), errors.Is(err, cluster.ErrBadKey):
		return apiErr(err, server.ErrInvalid)
	}
	return err
}

// kindErr is an error marked with a kind: its message is the error's, and
// it is both.
type kindErr struct{ err, kind error }

func (e kindErr) Error() string   { return e.err.Error() }
func (e kindErr) Unwrap() []error { return []error{e.err, e.kind} }

func apiErr(err, kind error) error { return kindErr{err: err, kind: kind} }
