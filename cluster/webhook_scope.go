package cluster

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// A webhook belongs to a scope (a tenant and project): it hears the runs
// of its scope only, and only its scope's principals list or remove it.
// Its scope is in its session's labels; a webhook without them (added
// before scopes) is the default scope's.
const (
	LabelWebhookTenant  = "rath.cluster.webhook.tenant"
	LabelWebhookProject = "rath.cluster.webhook.project"
)

type ownerKey struct{}

// AddWebhookIn is AddWebhookWith for a webhook of scope sc: a tenant's
// (the server's /v1). A URL whose host is an address or a name a delivery
// may not reach (see Options.WebhookAllow) is refused at once, with an
// error wrapping ErrBadWebhook and ErrWebhookRefused; a name that resolves
// to one is refused as each delivery connects. A secret reference outside
// the secret roots granted to sc (Options.SecretRoots) is refused with an
// error wrapping ErrBadWebhook and ErrSecretNotAllowed, and its
// deliveries resolve it only within them (webhook_secret.go).
func (c *Cluster) AddWebhookIn(ctx context.Context, sc store.Scope, rawURL string, events []string, o WebhookOptions) (*Webhook, error) {
	if u, err := url.Parse(rawURL); err == nil {
		if err := c.allow.checkTarget(u); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadWebhook, err)
		}
	}
	// The scope as its deliveries will read it from its labels.
	if o.Secret != "" && secret.IsRef(o.Secret) && !c.roots.allows(store.ScopeOf(sc.Labels()), o.Secret) {
		if _, err := secret.Parse(o.Secret); err == nil { // a malformed one is AddWebhookWith's to refuse
			return nil, fmt.Errorf("%w: its signing secret: %w", ErrBadWebhook, ErrSecretNotAllowed)
		}
	}
	return c.AddWebhookWith(context.WithValue(ctx, ownerKey{}, sc), rawURL, events, o)
}

// ownerLabels are the scope labels of a webhook added under ctx.
func ownerLabels(ctx context.Context) map[string]string {
	sc, ok := ctx.Value(ownerKey{}).(store.Scope)
	if !ok {
		return nil
	}
	l := sc.Labels()
	return map[string]string{LabelWebhookTenant: l[store.LabelTenant], LabelWebhookProject: l[store.LabelProject]}
}

// WebhookScope is the scope of webhook id.
func (c *Cluster) WebhookScope(ctx context.Context, id session.ID) (store.Scope, error) {
	if sc, ok := c.hookScopes.Load(id); ok {
		return sc.(store.Scope), nil
	}
	info, err := c.rt.Store.Info(ctx, id)
	if err != nil {
		return store.Scope{}, err
	}
	sc := store.ScopeOf(map[string]string{store.LabelTenant: info.Labels[LabelWebhookTenant], store.LabelProject: info.Labels[LabelWebhookProject]})
	c.hookScopes.Store(id, sc) // a webhook's scope never changes
	return sc, nil
}

// hears reports whether webhook h hears run's events: the run is in its
// scope.
func (c *Cluster) hears(ctx context.Context, h *Webhook, run *Run) bool {
	sc, err := c.WebhookScope(ctx, h.ID)
	if err != nil {
		c.log.Warn("webhooks: scope", "webhook", h.ID, "err", err)
		return false
	}
	return sc.Covers(store.ScopeOf(map[string]string{store.LabelTenant: run.Tenant, store.LabelProject: run.Project}))
}

// hookScopeCache is the scopes of webhooks seen, by id.
type hookScopeCache = sync.Map
