package cluster

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// FuzzVerifyWebhook: whatever the headers of a delivery, VerifyWebhook
// answers without panicking, takes only the signature SignWebhook makes for
// the body, and refuses it for another body.
func FuzzVerifyWebhook(f *testing.F) {
	f.Add("s3cret", "1700000000", "sha256=00", []byte(`{"id":1}`))
	f.Add("", "", "", []byte{})
	f.Fuzz(func(t *testing.T, secret, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderWebhookTimestamp, ts)
		h.Set(HeaderWebhookSignature, sig)
		err := VerifyWebhook(secret, h, body, 100*365*24*time.Hour)
		if n, perr := strconv.ParseInt(ts, 10, 64); perr == nil && err == nil && sig != SignWebhook(secret, n, body) {
			t.Fatalf("a signature %q that is not the body's was taken", sig)
		}
		now := time.Now().Unix()
		h.Set(HeaderWebhookTimestamp, strconv.FormatInt(now, 10))
		h.Set(HeaderWebhookSignature, SignWebhook(secret, now, body))
		if err := VerifyWebhook(secret, h, body, time.Minute); err != nil {
			t.Fatalf("the body's own signature was refused: %v", err)
		}
		if err := VerifyWebhook(secret, h, append(body, 'x'), time.Minute); err == nil {
			t.Fatal("the signature of another body was taken")
		}
	})
}
