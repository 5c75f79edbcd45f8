package opensandbox_test

import (
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox/opensandbox"
	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/secret"
)

// An API key given as a secret reference is resolved when the backend
// builds its client; an unresolvable one is an error naming it.
func TestAPIKeySecretReference(t *testing.T) {
	t.Setenv("RATH_OS_TEST_KEY", testKey)
	srv, _ := startFake(t, osfake.Options{})
	o := optionsOf(srv)
	o.APIKey = "secret://env/RATH_OS_TEST_KEY"
	if err := opensandbox.New(o).Available(t.Context()); err != nil {
		t.Fatal(err)
	}
	o.APIKey = "secret://env/RATH_OS_TEST_UNSET"
	err := opensandbox.New(o).Available(t.Context())
	// (Available says the backend is unavailable, and why.)
	if err == nil || !strings.Contains(err.Error(), "opensandbox: api_key: secret://env/RATH_OS_TEST_UNSET: "+secret.ErrNotFound.Error()) {
		t.Fatalf("err = %v", err)
	}
}
