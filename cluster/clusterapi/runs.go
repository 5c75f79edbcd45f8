// Package clusterapi serves the Agent Cluster through the Agent Server:
// the server.Runs of a cluster.Cluster, its errors told apart by the kinds
// the server answers with. (Package server cannot import cluster, which
// sits above it; this package joins the two.)
package clusterapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/runctx"
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
	o := cluster.SubmitOptions{Input: req.Input, Needs: req.Needs, Key: req.Key, Tenant: req.Scope.Tenant, Project: req.Scope.Project, Session: req.Session}
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
	v, err := c.Run(ctx, req.Scope, id)
	if err != nil && replayed {
		// The key names a run of another project of the tenant: the key
		// is the tenant's, the run is not this principal's to see.
		return server.RunView{}, false, apiErr(fmt.Errorf("%w: it names a run outside the project", cluster.ErrKeyReused), server.ErrKeyReused)
	}
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

func (c clusterRuns) Run(ctx context.Context, sc store.Scope, id session.ID) (server.RunView, error) {
	r, err := c.runIn(ctx, sc, id)
	if err != nil {
		return server.RunView{}, err
	}
	return server.RunView{ID: r.ID, State: string(r.State), Created: r.Created, Body: r}, nil
}

// runIn is run id's record if it is in scope sc, else not found.
func (c clusterRuns) runIn(ctx context.Context, sc store.Scope, id session.ID) (*cluster.RunItem, error) {
	r, err := c.cl.RunInfo(ctx, id)
	if err != nil {
		return nil, kindOf(err)
	}
	if !sc.Covers(r.Run.Scope()) {
		return nil, apiErr(fmt.Errorf("%w: session %s", cluster.ErrNotARun, id), store.ErrNotFound)
	}
	return r, nil
}

func (c clusterRuns) Cancel(ctx context.Context, sc store.Scope, id session.ID, by, reason string) error {
	if _, err := c.runIn(ctx, sc, id); err != nil {
		return err
	}
	return kindOf(c.cl.Cancel(ctx, id, by, reason))
}

func (c clusterRuns) Resume(ctx context.Context, sc store.Scope, id session.ID, by, reason string) error {
	if _, err := c.runIn(ctx, sc, id); err != nil {
		return err
	}
	return kindOf(c.cl.Resume(ctx, id, by, reason))
}

func (c clusterRuns) Review(ctx context.Context, sc store.Scope, id session.ID, req server.ReviewRequest) error {
	if _, err := c.runIn(ctx, sc, id); err != nil {
		return err
	}
	return kindOf(c.cl.Review(ctx, id, cluster.ReviewOptions{Verdict: req.Verdict, Result: req.Result, CallID: req.Call, By: req.By, Reason: req.Reason, Force: req.Force}))
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

func (c clusterRuns) Decide(ctx context.Context, sc store.Scope, id session.ID, v server.Verdict) error {
	if _, err := c.runIn(ctx, sc, id); err != nil {
		return err
	}
	return kindOf(c.cl.ApproveAt(ctx, id, v.Head, v.Verdict == "approve", v.By, v.Reason))
}

func (c clusterRuns) Queued(ctx context.Context, sc store.Scope) (int, error) {
	return c.cl.Queued(ctx, &sc)
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

func (c clusterRuns) RunSessions(ctx context.Context, sc store.Scope, id session.ID) ([]session.ID, error) {
	if _, err := c.runIn(ctx, sc, id); err != nil {
		return nil, err
	}
	ids, err := c.cl.RunSessions(ctx, id)
	return ids, kindOf(err)
}

func (c clusterRuns) RunOwner(info store.Info) session.ID { return cluster.RunOwner(info) }

func (c clusterRuns) Schedules(ctx context.Context, sc store.Scope) (any, error) {
	ss, err := c.cl.Schedules(ctx)
	if err != nil {
		return nil, kindOf(err)
	}
	out := []cluster.Schedule{}
	for _, s := range ss {
		if sc.Covers(s.Scope()) {
			out = append(out, s)
		}
	}
	return out, nil
}

// scheduleIn is nil if schedule name is in scope sc, else not found.
func (c clusterRuns) scheduleIn(ctx context.Context, sc store.Scope, name string) error {
	ss, err := c.cl.Schedules(ctx)
	if err != nil {
		return kindOf(err)
	}
	for _, s := range ss {
		if s.Name == name && sc.Covers(s.Scope()) {
			return nil
		}
	}
	return apiErr(fmt.Errorf("%w: %q", cluster.ErrNoSchedule, name), store.ErrNotFound)
}

func (c clusterRuns) AddSchedule(ctx context.Context, sc store.Scope, req server.ScheduleRequest) (any, error) {
	in := store.ScopeOf(sc.Labels())
	s, err := c.cl.AddSchedule(ctx, cluster.Schedule{Name: req.Name, Workflow: req.Workflow, Cron: req.Cron, Input: req.Input, Needs: req.Needs, Paused: req.Paused,
		Tenant: in.Tenant, Project: in.Project})
	return s, kindOf(err)
}

func (c clusterRuns) PauseSchedule(ctx context.Context, sc store.Scope, name string, paused bool) (any, error) {
	if err := c.scheduleIn(ctx, sc, name); err != nil {
		return nil, err
	}
	s, err := c.cl.PauseSchedule(runctx.WithScope(ctx, sc), name, paused)
	return s, kindOf(err)
}

func (c clusterRuns) RemoveSchedule(ctx context.Context, sc store.Scope, name string) error {
	if err := c.scheduleIn(ctx, sc, name); err != nil {
		return err
	}
	return kindOf(c.cl.RemoveSchedule(runctx.WithScope(ctx, sc), name))
}

func (c clusterRuns) Webhooks(ctx context.Context, sc store.Scope) (any, error) {
	hs, err := c.cl.Webhooks(ctx)
	if err != nil {
		return nil, kindOf(err)
	}
	out := []cluster.Webhook{}
	for _, h := range hs {
		if hsc, err := c.cl.WebhookScope(ctx, h.ID); err == nil && sc.Covers(hsc) {
			out = append(out, h)
		}
	}
	return out, nil
}

// webhookIn is nil if webhook id is in scope sc, else not found.
func (c clusterRuns) webhookIn(ctx context.Context, sc store.Scope, id session.ID) error {
	hsc, err := c.cl.WebhookScope(ctx, id)
	if err == nil && !sc.Covers(hsc) {
		err = store.ErrNotFound
	}
	if err != nil {
		return apiErr(fmt.Errorf("%w: %s", cluster.ErrNoWebhook, id), store.ErrNotFound)
	}
	return nil
}

// newWebhook is a webhook as it is added: with its secret, shown once (or
// the reference to it, which the webhook's record shows).
type newWebhook struct {
	*cluster.Webhook
	Secret string `json:"secret,omitempty"`
}

func (c clusterRuns) AddWebhook(ctx context.Context, sc store.Scope, req server.WebhookRequest) (any, error) {
	h, err := c.cl.AddWebhookIn(ctx, sc, req.URL, req.Events, cluster.WebhookOptions{Secret: req.Secret, By: req.By})
	if err != nil {
		return nil, kindOf(err)
	}
	return newWebhook{Webhook: h, Secret: h.Secret}, nil
}

func (c clusterRuns) RemoveWebhook(ctx context.Context, sc store.Scope, id session.ID) error {
	if err := c.webhookIn(ctx, sc, id); err != nil {
		return err
	}
	return kindOf(c.cl.RemoveWebhook(ctx, id))
}

func (c clusterRuns) Deliveries(ctx context.Context, sc store.Scope, id session.ID, limit int) (any, error) {
	if err := c.webhookIn(ctx, sc, id); err != nil {
		return nil, err
	}
	ds, err := c.cl.Deliveries(ctx, id, limit)
	if ds == nil {
		ds = []cluster.Delivery{}
	}
	return ds, kindOf(err)
}

func (c clusterRuns) Deltas(ctx context.Context, sc store.Scope, id session.ID) (<-chan server.RunDelta, error) {
	if _, err := c.runIn(ctx, sc, id); err != nil {
		return nil, err
	}
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
	sc := q.Scope
	return cluster.RunFilter{State: cluster.State(q.State), Workflow: q.Workflow, Since: q.Since, Until: q.Until, Limit: q.Limit, Scope: &sc}
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
	case errors.Is(err, cluster.ErrNotWaiting), errors.Is(err, cluster.ErrFinal), errors.Is(err, cluster.ErrNotResumable), errors.Is(err, cluster.ErrHolderMayExist):
		return apiErr(err, store.ErrConflict)
	case errors.Is(err, cluster.ErrKeyReused):
		return apiErr(err, server.ErrKeyReused)
	case errors.Is(err, cluster.ErrExhausted):
		return apiErr(err, server.ErrExhausted)
	case errors.Is(err, cluster.ErrNoInput), errors.Is(err, rath.ErrUnknownWorkflow), errors.Is(err, rath.ErrBadInput), errors.Is(err, cluster.ErrBadNeeds), errors.Is(err, cluster.ErrBadFilter), errors.Is(err, cluster.ErrBadKey):
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
