package cluster

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// failingTransport fails every request, as a receiver that cannot be
// reached does.
type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// TestDeliveryErrorRedactsURL: a delivery that fails returns an error
// (kept in River's job and logged) whose URL is redacted, a user name
// given alone included, which net/http's own error keeps.
func TestDeliveryErrorRedactsURL(t *testing.T) {
	ww := &webhookWorker{http: &http.Client{Transport: failingTransport{}}}
	for _, u := range []string{"https://tok-CANARY-31@hooks.example.com/x", "https://alice:pa55-CANARY-31@hooks.example.com/x"} {
		_, err := ww.post(context.Background(), &Webhook{ID: "ses_x", URL: u}, 1, []byte("{}"))
		if err == nil {
			t.Fatalf("%s: a failed delivery returned no error", u)
		}
		if strings.Contains(err.Error(), "CANARY") || !strings.Contains(err.Error(), "xxxxx@hooks.example.com") {
			t.Errorf("a failed delivery's error: %v", err)
		}
	}
}
