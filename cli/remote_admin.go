package cli

import (
	"context"

	"github.com/openrath/rath/client"
	"github.com/openrath/rath/cluster"
	"github.com/openrath/rath/session"
)

// adminOps is what `rath schedule` and `rath webhooks` do: on the
// cluster of the runtime's store, or through the Agent Server of --server.
type adminOps interface {
	AddSchedule(ctx context.Context, s cluster.Schedule) (*cluster.Schedule, error)
	Schedules(ctx context.Context) ([]cluster.Schedule, error)
	PauseSchedule(ctx context.Context, name string, paused bool) (*cluster.Schedule, error)
	RemoveSchedule(ctx context.Context, name string) error
	AddWebhookWith(ctx context.Context, url string, events []string, o cluster.WebhookOptions) (*cluster.Webhook, error)
	Webhooks(ctx context.Context) ([]cluster.Webhook, error)
	RemoveWebhook(ctx context.Context, id session.ID) error
	Deliveries(ctx context.Context, id session.ID, limit int) ([]cluster.Delivery, error)
}

var (
	_ adminOps = localOps{}
	_ adminOps = remoteOps{}
)

func (r remoteOps) AddSchedule(ctx context.Context, s cluster.Schedule) (*cluster.Schedule, error) {
	got, err := r.c.AddSchedule(ctx, client.Schedule{Name: s.Name, Workflow: s.Workflow, Cron: s.Cron, Input: s.Input, Needs: s.Needs, Paused: s.Paused})
	if err != nil {
		return nil, err
	}
	var out cluster.Schedule
	return &out, convert(got, &out)
}

func (r remoteOps) Schedules(ctx context.Context) ([]cluster.Schedule, error) {
	got, err := r.c.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	var out []cluster.Schedule
	return out, convert(got, &out)
}

func (r remoteOps) PauseSchedule(ctx context.Context, name string, paused bool) (*cluster.Schedule, error) {
	got, err := r.c.PauseSchedule(ctx, name, paused)
	if err != nil {
		return nil, err
	}
	var out cluster.Schedule
	return &out, convert(got, &out)
}

func (r remoteOps) RemoveSchedule(ctx context.Context, name string) error {
	return r.c.RemoveSchedule(ctx, name)
}

func (r remoteOps) AddWebhookWith(ctx context.Context, url string, events []string, o cluster.WebhookOptions) (*cluster.Webhook, error) {
	got, err := r.c.AddWebhookWith(ctx, url, events, o.Secret)
	if err != nil {
		return nil, err
	}
	var out cluster.Webhook
	if err := convert(got, &out); err != nil {
		return nil, err
	}
	out.Secret = got.Secret // not in the cluster type's JSON
	return &out, nil
}

func (r remoteOps) Webhooks(ctx context.Context) ([]cluster.Webhook, error) {
	got, err := r.c.Webhooks(ctx)
	if err != nil {
		return nil, err
	}
	var out []cluster.Webhook
	return out, convert(got, &out)
}

func (r remoteOps) RemoveWebhook(ctx context.Context, id session.ID) error {
	return r.c.RemoveWebhook(ctx, id)
}

func (r remoteOps) Deliveries(ctx context.Context, id session.ID, limit int) ([]cluster.Delivery, error) {
	got, err := r.c.Deliveries(ctx, id, limit)
	if err != nil {
		return nil, err
	}
	var out []cluster.Delivery
	return out, convert(got, &out)
}
