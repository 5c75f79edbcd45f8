package cluster

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/riverqueue/river/rivertype"

	"github.com/openrath/rath/internal/seal"
)

// TestDeliveryErrorShown: the deliveries list shows a category, never
// River's error text nor a raw error an older worker recorded.
func TestDeliveryErrorShown(t *testing.T) {
	raw := "cluster: webhook ses_1: Post \"http://10.0.0.5:5432/\": dial tcp 10.0.0.5:5432: connect: connection refused"
	job := func(state rivertype.JobState, out *webhookOutput) *rivertype.JobRow {
		j := &rivertype.JobRow{ID: 1, State: state, Attempt: 1, Errors: []rivertype.AttemptError{{Attempt: 1, Error: raw}}}
		if out != nil {
			b, _ := json.Marshal(map[string]any{"output": out})
			j.Metadata = b
		}
		return j
	}
	for _, c := range []struct {
		j    *rivertype.JobRow
		want string
	}{
		{job(rivertype.JobStateRetryable, nil), deliveryFailed},
		{job(rivertype.JobStateRetryable, &webhookOutput{Outcome: OutcomeRetrying, Error: raw}), deliveryFailed},
		{job(rivertype.JobStateRetryable, &webhookOutput{Outcome: OutcomeRetrying, Error: deliveryConnect}), deliveryConnect},
		{job(rivertype.JobStateCancelled, &webhookOutput{Outcome: OutcomeFailed, Error: deliveryRefused}), deliveryRefused},
		{job(rivertype.JobStateRetryable, &webhookOutput{Status: 503, Outcome: OutcomeRetrying, Error: deliveryStatus(503)}), "HTTP status 503"},
		{job(rivertype.JobStateRetryable, &webhookOutput{Outcome: OutcomeRetrying, Error: "HTTP status 503 from 10.0.0.5"}), deliveryFailed},
	} {
		if d := deliveryOf(c.j, webhookArgs{}); d.Error != c.want {
			t.Errorf("%+v: shown %q, want %q", c.j.Metadata, d.Error, c.want)
		}
	}
}

// TestUnsealWrongKey: a webhook sealed with another key does not open
// (the delivery fails, naming both keys in the worker's log).
func TestUnsealWrongKey(t *testing.T) {
	dir := t.TempDir()
	mine := &Cluster{opts: Options{WebhookKeyFile: filepath.Join(dir, "mine.key")}}
	theirs := &Cluster{opts: Options{WebhookKeyFile: filepath.Join(dir, "theirs.key")}}
	k, err := theirs.sealKey()
	if err != nil {
		t.Fatal(err)
	}
	h := &Webhook{ID: "ses_1", Secret: k.Seal([]byte("key"), sealPlace("ses_1", LabelWebhookSecret))}
	if err := mine.unseal(h); !errors.Is(err, seal.ErrWrongKey) {
		t.Fatalf("another key: %v, want seal.ErrWrongKey", err)
	}
	if err := theirs.unseal(h); err != nil || h.Secret != "key" {
		t.Fatalf("its key: %q %v", h.Secret, err)
	}
}
