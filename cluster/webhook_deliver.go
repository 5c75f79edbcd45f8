package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"
)

// Headers of a webhook delivery.
const (
	// HeaderWebhookTimestamp is the delivery's time, in Unix seconds.
	HeaderWebhookTimestamp = "X-Rath-Timestamp"
	// HeaderWebhookSignature is "sha256=" and the hex HMAC-SHA256, keyed
	// by the webhook's secret, of the timestamp, ".", and the body.
	HeaderWebhookSignature = "X-Rath-Signature"
	// HeaderWebhookDelivery is the delivery's id (its job's).
	HeaderWebhookDelivery = "X-Rath-Delivery"
)

// webhookTimeout bounds one delivery attempt's request.
const webhookTimeout = 10 * time.Second

// maxWebhookBackoff caps the wait between a delivery's attempts.
const maxWebhookBackoff = 10 * time.Minute

// ErrWebhookSignature: a delivery's signature is missing, stale or wrong.
var ErrWebhookSignature = errors.New("cluster: bad webhook signature")

// SignWebhook is the signature of a delivery of body at ts (Unix seconds)
// with secret: "sha256=" and the hex HMAC-SHA256 of ts, ".", body.
func SignWebhook(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifyWebhook checks a delivery's signature headers against body and
// secret, and (tolerance > 0) that its timestamp is within tolerance of
// now. Its errors wrap ErrWebhookSignature.
func VerifyWebhook(secret string, header http.Header, body []byte, tolerance time.Duration) error {
	raw := header.Get(HeaderWebhookTimestamp)
	ts, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q", ErrWebhookSignature, raw)
	}
	if tolerance > 0 {
		if d := time.Since(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
			return fmt.Errorf("%w: timestamp %d is %s away from now", ErrWebhookSignature, ts, d.Round(time.Second))
		}
	}
	got := header.Get(HeaderWebhookSignature)
	if !strings.HasPrefix(got, "sha256=") {
		return fmt.Errorf("%w: no sha256 signature", ErrWebhookSignature)
	}
	if !hmac.Equal([]byte(got), []byte(SignWebhook(secret, ts, body))) {
		return fmt.Errorf("%w: it does not match", ErrWebhookSignature)
	}
	return nil
}

// WebhookEvent is the body of a delivery.
type WebhookEvent struct {
	// ID is the delivery's id (also in HeaderWebhookDelivery).
	ID    int64     `json:"id"`
	Event string    `json:"event"`
	Run   *Run      `json:"run"`
	At    time.Time `json:"at"`
}

// webhookOutput is what an attempt records on its job (River's output):
// the HTTP status it got and what came of it.
type webhookOutput struct {
	Status  int    `json:"status,omitempty"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// Delivery outcomes.
const (
	OutcomeDelivered    = "delivered"
	OutcomeRetrying     = "retrying"
	OutcomeFailed       = "failed"
	OutcomeUnsubscribed = "unsubscribed"
	OutcomePending      = "pending"
)

// webhookWorker delivers webhook jobs.
type webhookWorker struct {
	river.WorkerDefaults[webhookArgs]
	c    *Cluster
	http *http.Client
}

func newWebhookWorker(c *Cluster) *webhookWorker {
	return &webhookWorker{c: c, http: webhookClient(webhookDialer{allow: c.allow})}
}

// webhookClient is the HTTP client deliveries are made with: it connects
// through d only (never through a proxy of the environment) and follows no
// redirect.
func webhookClient(d webhookDialer) *http.Client {
	return &http.Client{
		Timeout: webhookTimeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         d.dial,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        16,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: webhookTimeout,
		},
		// A redirect is not a delivery: it is retried, and shown.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Timeout implements river.Worker: the request's timeout and some.
func (ww *webhookWorker) Timeout(*river.Job[webhookArgs]) time.Duration {
	return webhookTimeout + 5*time.Second
}

// NextRetry implements river.Worker: WebhookBackoff, doubling with each
// attempt, capped at 10 minutes.
func (ww *webhookWorker) NextRetry(job *river.Job[webhookArgs]) time.Time {
	return time.Now().Add(webhookBackoff(ww.c.opts.WebhookBackoff, job.Attempt))
}

// webhookBackoff is the wait after attempt (1, 2, ...) failed.
func webhookBackoff(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < maxWebhookBackoff; i++ {
		d *= 2
	}
	return min(d, maxWebhookBackoff)
}

// Work implements river.Worker: POST the event. 2xx delivers it; 410 Gone
// unsubscribes the webhook; anything else is an error River retries.
func (ww *webhookWorker) Work(ctx context.Context, job *river.Job[webhookArgs]) error {
	a := job.Args
	h, err := ww.c.webhook(ctx, a.Webhook)
	if errors.Is(err, ErrNoWebhook) {
		ww.record(ctx, webhookOutput{Outcome: OutcomeFailed, Error: deliveryRemoved})
		return river.JobCancel(err)
	}
	if errors.Is(err, ErrSecretNotAllowed) {
		ww.record(ctx, webhookOutput{Outcome: OutcomeRetrying, Error: deliverySecret})
		ww.c.log.Warn("webhook delivery: no signing secret", "webhook", a.Webhook, "err", err)
		return err
	}
	if err != nil {
		return err
	}
	var run Run
	if err := json.Unmarshal(a.Record, &run); err != nil {
		return river.JobCancel(fmt.Errorf("cluster: delivery %d: run record: %w", job.ID, err))
	}
	body, err := json.Marshal(WebhookEvent{ID: job.ID, Event: a.Event, Run: &run, At: a.At})
	if err != nil {
		return river.JobCancel(err)
	}
	status, err := ww.post(ctx, h, job.ID, body)
	switch {
	case errors.Is(err, ErrWebhookRefused):
		// Not retried: the target stays refused until the operator
		// allows it.
		ww.record(ctx, webhookOutput{Outcome: OutcomeFailed, Error: deliveryRefused})
		ww.c.log.Warn("webhook delivery refused", "webhook", h.ID, "url", RedactURL(h.URL), "err", err)
		return river.JobCancel(err)
	case err != nil:
		ww.record(ctx, webhookOutput{Outcome: OutcomeRetrying, Error: deliveryFailure(err)})
		return err
	case status == http.StatusGone:
		ww.record(ctx, webhookOutput{Status: status, Outcome: OutcomeUnsubscribed})
		if err := ww.c.RemoveWebhook(ctx, h.ID); err != nil && !errors.Is(err, ErrNoWebhook) {
			return err
		}
		ww.c.log.Info("webhook unsubscribed: its receiver answered 410 Gone", "webhook", h.ID, "url", RedactURL(h.URL))
		return nil
	case status < 200 || status > 299:
		err := fmt.Errorf("cluster: webhook %s: %s answered status %d", h.ID, RedactURL(h.URL), status)
		ww.record(ctx, webhookOutput{Status: status, Outcome: OutcomeRetrying, Error: deliveryStatus(status)})
		return err
	}
	ww.record(ctx, webhookOutput{Status: status, Outcome: OutcomeDelivered})
	return nil
}

// post sends a signed delivery and returns the status it got.
func (ww *webhookWorker) post(ctx context.Context, h *Webhook, id int64, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("cluster: webhook %s: %w", h.ID, redactErr(err, h.URL))
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "rath-webhook")
	req.Header.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderWebhookSignature, SignWebhook(h.Secret, ts, body))
	req.Header.Set(HeaderWebhookDelivery, strconv.FormatInt(id, 10))
	resp, err := ww.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cluster: webhook %s: %w", h.ID, redactErr(err, h.URL))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// record notes an attempt's outcome on its job, for Deliveries.
func (ww *webhookWorker) record(ctx context.Context, o webhookOutput) {
	if err := river.RecordOutput(ctx, o); err != nil {
		ww.c.log.Warn("webhooks: record outcome", "err", err)
	}
}

// redactErr is err with the URL a *url.Error names redacted (RedactURL).
// net/http hides a URL's password in its errors but not a user name given
// alone, often a token; River keeps a delivery's error in its job, and
// the worker's log shows it.
func redactErr(err error, rawURL string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = RedactURL(rawURL)
	}
	return err
}
