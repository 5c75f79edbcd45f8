package remote

import (
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath/secret"
)

func TestResolveSecret(t *testing.T) {
	ctx := t.Context()
	t.Setenv("RATH_REMOTE_TEST_KEY", "remote-value-1")
	if v, err := ResolveSecret(ctx, "e2b", KeyAPIKey, "secret://env/RATH_REMOTE_TEST_KEY"); err != nil || v != "remote-value-1" {
		t.Fatalf("%q %v", v, err)
	}
	if v, err := ResolveSecret(ctx, "e2b", KeyAPIKey, "a-literal"); err != nil || v != "a-literal" {
		t.Fatalf("%q %v", v, err)
	}
	_, err := ResolveSecret(ctx, "e2b", KeyAPIKey, "secret://env/RATH_REMOTE_TEST_UNSET")
	if !errors.Is(err, secret.ErrNotFound) || !strings.HasPrefix(err.Error(), "api_key: secret://env/RATH_REMOTE_TEST_UNSET: ") {
		t.Fatalf("err = %v", err)
	}
	if _, err := ResolveSecret(ctx, "e2b", KeyAPIKey, "secret:x"); !errors.Is(err, secret.ErrBadRef) {
		t.Fatalf("err = %v", err)
	}
}
