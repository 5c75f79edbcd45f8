package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/openrath/rath/session"
)

// Webhook is a URL subscribed to run events.
type Webhook struct {
	ID      session.ID `json:"id"`
	URL     string     `json:"url"`
	Events  []string   `json:"events,omitempty"`
	Created time.Time  `json:"created"`
	// Secret signs the deliveries; AddWebhook's answer alone has it. A
	// webhook added with a secret reference has SecretRef instead.
	Secret    string `json:"secret,omitempty"`
	SecretRef string `json:"secret_ref,omitempty"`
	// By is the principal who added it over the API.
	By string `json:"by,omitempty"`
}

// Delivery is one delivery of a run event to a webhook.
type Delivery struct {
	ID      int64      `json:"id"`
	Event   string     `json:"event"`
	Run     session.ID `json:"run"`
	State   string     `json:"state"`
	Attempt int        `json:"attempt"`
	Status  int        `json:"status,omitempty"`
	Error   string     `json:"error,omitempty"`
	// Outcome is delivered, retrying, failed, unsubscribed or pending.
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
}

// AddWebhook subscribes url to run events (the states given, or all) and
// returns the webhook with its secret, which the server does not show
// again.
func (c *Client) AddWebhook(ctx context.Context, url string, events []string) (*Webhook, error) {
	return c.AddWebhookWith(ctx, url, events, "")
}

// AddWebhookWith is AddWebhook whose deliveries are signed with the key
// secretRef refers to (secret://env/NAME, secret://file/PATH; "": a
// random secret): the server keeps the reference, never a value.
func (c *Client) AddWebhookWith(ctx context.Context, url string, events []string, secretRef string) (*Webhook, error) {
	b, err := json.Marshal(struct {
		URL    string   `json:"url"`
		Events []string `json:"events,omitempty"`
		Secret string   `json:"secret,omitempty"`
	}{url, events, secretRef})
	if err != nil {
		return nil, err
	}
	var h Webhook
	if err := c.call(ctx, request{method: "POST", path: "/v1/webhooks", body: bytes.NewReader(b), ctype: "application/json"}, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// Webhooks returns the webhooks, without their secrets.
func (c *Client) Webhooks(ctx context.Context) ([]Webhook, error) {
	var out struct {
		Items []Webhook `json:"items"`
	}
	err := c.call(ctx, request{method: "GET", path: "/v1/webhooks"}, &out)
	return out.Items, err
}

// RemoveWebhook unsubscribes webhook id.
func (c *Client) RemoveWebhook(ctx context.Context, id session.ID) error {
	res, err := c.do(ctx, request{method: "DELETE", path: "/v1/webhooks/" + url.PathEscape(string(id))})
	if err != nil {
		return err
	}
	return res.Body.Close()
}

// Deliveries returns webhook id's latest deliveries (at most limit, 1 to
// 200), newest first.
func (c *Client) Deliveries(ctx context.Context, id session.ID, limit int) ([]Delivery, error) {
	var out struct {
		Items []Delivery `json:"items"`
	}
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	err := c.call(ctx, request{method: "GET", path: "/v1/webhooks/" + url.PathEscape(string(id)) + "/deliveries", query: q}, &out)
	return out.Items, err
}
