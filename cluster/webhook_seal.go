package cluster

import (
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/openrath/rath/internal/seal"
	"github.com/openrath/rath/session"
)

// Webhooks' keys at rest. The random key a webhook's deliveries are
// signed with, and its URL when the URL carries credentials, are kept in
// its session's labels sealed (package internal/seal: AES-256-GCM, bound
// to the webhook and to the label) with a key kept outside the store:
// Options.WebhookKeyFile, by default webhook.key in the runtime's home,
// created with mode 0600 when the first webhook is added. Every process
// that adds webhooks or delivers them needs the same file: processes on
// one machine share the home; workers elsewhere are given a copy. A
// webhook added before keys were sealed keeps its key in plain until it is
// added again; a reference (WebhookOptions.Secret) is kept as it is (it is
// not a secret).

// LabelWebhookURL holds a webhook's URL, sealed, when the URL carries
// credentials (its record holds it redacted).
const LabelWebhookURL = "rath.cluster.webhook.url"

// sealer is a process's webhook key, loaded once it is first needed.
type sealer struct {
	mu  sync.Mutex
	key *seal.Key
}

// sealKey is the cluster's webhook key, read from (or created at)
// Options.WebhookKeyFile.
func (c *Cluster) sealKey() (*seal.Key, error) {
	c.sealer.mu.Lock()
	defer c.sealer.mu.Unlock()
	if c.sealer.key != nil {
		return c.sealer.key, nil
	}
	path := c.opts.WebhookKeyFile
	if path == "" {
		path = filepath.Join(c.rt.Home, "webhook.key")
	}
	k, err := seal.LoadKey(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: webhooks' key: %w", err)
	}
	c.sealer.key = k
	return k, nil
}

// sealPlace is what a sealed label of webhook id is bound to.
func sealPlace(id session.ID, label string) []byte {
	return []byte("rath webhook " + string(id) + " " + label)
}

// hasCredentials reports whether rawURL carries user information.
func hasCredentials(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.User != nil
}

// unseal opens h's sealed key and URL (for a delivery).
func (c *Cluster) unseal(h *Webhook) error {
	if !seal.IsSealed(h.Secret) && h.sealedURL == "" {
		return nil
	}
	k, err := c.sealKey()
	if err != nil {
		return err
	}
	if seal.IsSealed(h.Secret) {
		b, err := k.Open(h.Secret, sealPlace(h.ID, LabelWebhookSecret))
		if err != nil {
			return fmt.Errorf("cluster: webhook %s: its key: %w", h.ID, err)
		}
		h.Secret = string(b)
	}
	if h.sealedURL != "" {
		b, err := k.Open(h.sealedURL, sealPlace(h.ID, LabelWebhookURL))
		if err != nil {
			return fmt.Errorf("cluster: webhook %s: its url: %w", h.ID, err)
		}
		h.URL, h.sealedURL = string(b), ""
	}
	return nil
}
