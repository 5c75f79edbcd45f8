package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath/internal/seal"
	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Webhooks. A webhook subscribes a URL to run events: each change of a
// run's state is POSTed to it by a worker, as a River job of its own
// (webhook_deliver.go), signed with the webhook's secret. A webhook is a
// session of the store (LabelKind "webhook") whose labels hold its record
// (LabelWebhookRecord) and its secret (LabelWebhookSecret, kept to sign
// deliveries, sealed with a key outside the store: webhook_seal.go; never
// listed). Removing it wipes both and closes the session.
//
// A webhook added with a secret reference (WebhookOptions.Secret,
// "secret://env/HOOK_KEY": package secret) keeps only the reference in the
// store, in both labels; the worker delivering resolves it for each
// delivery (reported to the secret resolvers' observers, the audit log,
// as for "webhook ID"), and a delivery whose reference does not resolve
// fails, naming it, and is retried as any failed delivery.

// Labels of a webhook's session.
const (
	// LabelWebhookRecord holds a webhook's record as JSON (without its
	// secret); empty once it is removed.
	LabelWebhookRecord = "rath.cluster.webhook.record"
	// LabelWebhookSecret holds the secret its deliveries are signed with,
	// sealed (webhook_seal.go), or the secret reference to it.
	LabelWebhookSecret = "rath.cluster.webhook.secret"
)

// kindWebhook is LabelKind's value on a webhook's session.
const kindWebhook = "webhook"

// EventRunState is the event a webhook receives when a run's state
// changes.
const EventRunState = "run.state"

var (
	// ErrBadWebhook: a webhook's URL or events are not valid.
	ErrBadWebhook = errors.New("cluster: bad webhook")
	// ErrNoWebhook: no webhook has that id.
	ErrNoWebhook = errors.New("cluster: no such webhook")
)

// Webhook subscribes URL to the run events of Events. The JSON form is
// what the store keeps and lists (never the secret).
type Webhook struct {
	ID session.ID `json:"id"`
	// URL is where deliveries are POSTed; as listed or returned, its
	// credentials are redacted (RedactURL).
	URL string `json:"url"`
	// Events are the run states delivered ("done", "failed", ...); empty
	// for all.
	Events  []string  `json:"events,omitempty"`
	Created time.Time `json:"created"`
	// Secret signs the deliveries (HMAC-SHA256, see SignWebhook): 32
	// random bytes in hex, returned once by AddWebhook. Empty for a
	// webhook whose secret is a reference (SecretRef).
	Secret string `json:"-"`
	// SecretRef is the secret reference the deliveries' secret is
	// resolved from, if it was added with one (a reference is not a
	// secret: it is listed).
	SecretRef string `json:"secret_ref,omitempty"`
	// By is the principal who added it over the API (WebhookOptions.By),
	// for whom its secret is resolved.
	By string `json:"by,omitempty"`
	// scope is its scope if it was added for one (AddWebhookIn): its
	// secret reference is confined to the scope's secret roots.
	scope *store.Scope
	// sealedURL is its URL, sealed, if the URL carries credentials (URL
	// is then redacted until a delivery unseals it).
	sealedURL string
}

// WebhookOptions adjust AddWebhookWith.
type WebhookOptions struct {
	// Secret, if set, is a secret reference ("secret://env/NAME",
	// "secret://file/PATH", or a registered resolver's) to the key the
	// deliveries are signed with: the store keeps the reference, never a
	// value, and the workers resolve it at each delivery (so each worker
	// needs what it names: the variable, the file). A value is refused:
	// the store would keep it. Empty: a random secret, kept in the store
	// and returned once.
	Secret string
	// By names the principal adding it (as the audit log names
	// principals), recorded with it: the secret's resolutions at each
	// delivery are made for it (secret.WithActor).
	By string
}

// wants reports whether the webhook delivers state s.
func (h *Webhook) wants(s State) bool {
	return len(h.Events) == 0 || slices.Contains(h.Events, string(s))
}

// checkWebhook validates a webhook's URL and events; its errors wrap
// ErrBadWebhook.
func checkWebhook(raw string, events []string) error {
	u, err := parseWebhookURL(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: url %q is not an absolute http(s) URL", ErrBadWebhook, RedactURL(raw))
	}
	known := []State{StateQueued, StateUnroutable, StateBehind, StateRunning, StateWaitingApproval, StateNeedsReview,
		StateCancelled, StateFailed, StateDone}
	for _, e := range events {
		if !slices.Contains(known, State(e)) {
			return fmt.Errorf("%w: event %q is not a run state (%s)", ErrBadWebhook, e, joinStates(known))
		}
	}
	return nil
}

func joinStates(ss []State) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

// AddWebhook subscribes url (absolute http or https) to the run states
// events (none: all) and returns the webhook with its Secret — the only
// time the secret is returned. An invalid url or event is an error
// wrapping ErrBadWebhook.
func (c *Cluster) AddWebhook(ctx context.Context, rawURL string, events []string) (*Webhook, error) {
	return c.AddWebhookWith(ctx, rawURL, events, WebhookOptions{})
}

// AddWebhookWith is AddWebhook with options. The webhook returned has its
// URL as it is listed: credentials redacted (RedactURL). With o.Secret, a secret
// reference, the store keeps the reference and the webhook returned has
// SecretRef set and no Secret. A secret that is not a well-formed
// reference is an error wrapping ErrBadWebhook (it is not resolved here:
// the workers, which deliver, resolve it).
func (c *Cluster) AddWebhookWith(ctx context.Context, rawURL string, events []string, o WebhookOptions) (*Webhook, error) {
	events = slices.Compact(slices.Sorted(slices.Values(events)))
	if err := checkWebhook(rawURL, events); err != nil {
		return nil, err
	}
	var key, ref string
	if o.Secret != "" {
		if !secret.IsRef(o.Secret) {
			return nil, fmt.Errorf("%w: its secret is given as a secret reference (secret://env/NAME, secret://file/PATH), never as a value, which the store would keep", ErrBadWebhook)
		}
		r, err := secret.Parse(o.Secret)
		if err != nil {
			return nil, fmt.Errorf("%w: its secret: %w", ErrBadWebhook, err)
		}
		ref = r.String()
	} else {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("cluster: add webhook: %w", err)
		}
		key = hex.EncodeToString(b)
	}
	var k *seal.Key // before anything is stored: a webhook is not added without it
	if key != "" || hasCredentials(rawURL) {
		var err error
		if k, err = c.sealKey(); err != nil {
			return nil, fmt.Errorf("cluster: add webhook: %w", err)
		}
	}
	st := c.rt.Store
	shown := RedactURL(rawURL)
	ses := session.New().Append(session.Note("webhook for " + shown))
	if err := st.Commit(store.WithCreateScope(ctx, store.SystemScope), ses, ""); err != nil {
		return nil, fmt.Errorf("cluster: add webhook: %w", err)
	}
	// The record keeps the URL as it is listed; the key, and a URL with
	// credentials, are sealed (webhook_seal.go).
	h := &Webhook{ID: ses.ID(), URL: shown, Events: events, Created: time.Now().UTC(), Secret: key, SecretRef: ref, By: o.By}
	rec, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{LabelKind: kindWebhook, LabelWebhookRecord: string(rec), LabelWebhookSecret: ref}
	if key != "" {
		labels[LabelWebhookSecret] = k.Seal([]byte(key), sealPlace(h.ID, LabelWebhookSecret))
	}
	if hasCredentials(rawURL) {
		labels[LabelWebhookURL] = k.Seal([]byte(rawURL), sealPlace(h.ID, LabelWebhookURL))
	}
	maps.Copy(labels, ownerLabels(ctx))
	if err := st.SetLabels(ctx, h.ID, labels); err != nil {
		return nil, fmt.Errorf("cluster: add webhook: %w", err)
	}
	if err := store.MoveTo(ctx, st, h.ID, store.StatusActive); err != nil {
		return nil, fmt.Errorf("cluster: add webhook: %w", err)
	}
	c.hooks.reset()
	c.log.Info("webhook added", "webhook", h.ID, "url", h.URL)
	return h, nil
}

// Webhooks lists the cluster's webhooks, oldest first, without their
// secrets, their URLs' credentials redacted (RedactURL).
func (c *Cluster) Webhooks(ctx context.Context) ([]Webhook, error) {
	hs, err := c.webhooks(ctx)
	if err != nil {
		return nil, err
	}
	for i := range hs {
		hs[i].Secret, hs[i].URL = "", RedactURL(hs[i].URL)
	}
	return hs, nil
}

// webhooks lists the webhooks with their secrets.
func (c *Cluster) webhooks(ctx context.Context) ([]Webhook, error) {
	f := store.Filter{Labels: map[string]string{LabelKind: kindWebhook}, Status: []store.Status{store.StatusOpen, store.StatusActive}}
	infos, err := c.rt.Store.List(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("cluster: list webhooks: %w", err)
	}
	out := make([]Webhook, 0, len(infos))
	for _, info := range infos {
		h, err := webhookOf(info)
		if err != nil {
			continue // removed as it was listed
		}
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b Webhook) int {
		if d := a.Created.Compare(b.Created); d != 0 {
			return d
		}
		return strings.Compare(string(a.ID), string(b.ID))
	})
	return out, nil
}

// webhook reads the webhook id with its secret — resolved, if it is a
// reference, at this moment of use (a delivery), for the principal who
// added it, and within its scope's secret roots if it has a scope; a
// removed or unknown one is an error wrapping ErrNoWebhook, an
// unresolvable reference one wrapping ErrSecretNotAllowed and naming it
// (and, for the local operator's webhook, the secret package's sentinel).
func (c *Cluster) webhook(ctx context.Context, id session.ID) (*Webhook, error) {
	h, err := c.webhookRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := c.unseal(h); err != nil {
		return nil, err
	}
	if h.SecretRef == "" {
		return h, nil
	}
	ctx = secret.WithPurpose(ctx, "webhook "+string(id))
	var v secret.Value
	if h.scope != nil {
		ctx = secret.WithActor(ctx, secret.Actor{Principal: h.By, Tenant: h.scope.Tenant, Project: h.scope.Project})
		v, err = c.roots.resolve(ctx, *h.scope, h.SecretRef)
	} else {
		if v, err = secret.ResolveString(ctx, h.SecretRef); err != nil {
			err = fmt.Errorf("%w: %w", ErrSecretNotAllowed, err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: webhook %s: its signing secret: %w", id, err)
	}
	h.Secret = v.Reveal()
	return h, nil
}

// webhookRecord reads the webhook id, its secret unresolved.
func (c *Cluster) webhookRecord(ctx context.Context, id session.ID) (*Webhook, error) {
	info, err := c.rt.Store.Info(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNoWebhook, id)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: webhook %s: %w", id, err)
	}
	return webhookOf(info)
}

// webhookOf reads a webhook from its session's Info; one removed is an
// error wrapping ErrNoWebhook.
func webhookOf(info store.Info) (*Webhook, error) {
	raw := info.Labels[LabelWebhookRecord]
	if raw == "" || info.Labels[LabelKind] != kindWebhook {
		return nil, fmt.Errorf("%w: %s", ErrNoWebhook, info.ID)
	}
	var h Webhook
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return nil, fmt.Errorf("cluster: webhook %s: its record is malformed: %w", info.ID, err)
	}
	h.ID, h.Secret, h.sealedURL = info.ID, info.Labels[LabelWebhookSecret], info.Labels[LabelWebhookURL]
	if _, ok := info.Labels[LabelWebhookTenant]; ok {
		sc := store.ScopeOf(map[string]string{store.LabelTenant: info.Labels[LabelWebhookTenant], store.LabelProject: info.Labels[LabelWebhookProject]})
		h.scope = &sc
	}
	if secret.IsRef(h.Secret) {
		h.SecretRef, h.Secret = h.Secret, ""
	}
	return &h, nil
}

// RemoveWebhook unsubscribes the webhook id: its record and secret are
// wiped and its session closed (its deliveries still list). An unknown or
// removed id is an error wrapping ErrNoWebhook.
func (c *Cluster) RemoveWebhook(ctx context.Context, id session.ID) error {
	if _, err := c.webhookRecord(ctx, id); err != nil {
		return err
	}
	st := c.rt.Store
	if err := st.SetLabels(ctx, id, map[string]string{LabelWebhookRecord: "", LabelWebhookSecret: "", LabelWebhookURL: ""}); err != nil {
		return fmt.Errorf("cluster: remove webhook %s: %w", id, err)
	}
	c.hooks.reset()
	c.log.Info("webhook removed", "webhook", id)
	if err := store.MoveTo(ctx, st, id, store.StatusClosed); err != nil {
		return fmt.Errorf("cluster: remove webhook %s: close its session: %w", id, err)
	}
	return nil
}
