package e2b_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox/e2b"
	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/secret"
)

// An API key given as a secret reference is resolved when the backend
// builds its client: the fake, which wants the key, answers; an
// unresolvable reference is an error naming it.
func TestAPIKeySecretReference(t *testing.T) {
	t.Setenv("RATH_E2B_TEST_KEY", testKey)
	srv, _ := startFake(t, e2bfake.Options{})
	o := optionsOf(t, srv)
	o.APIKey = "secret://env/RATH_E2B_TEST_KEY"
	var seen []string
	remove := secret.Observe(func(ctx context.Context, ref secret.Ref, err error) {
		if strings.HasPrefix(ref.Name, "RATH_E2B_TEST_") {
			seen = append(seen, secret.Purpose(ctx)+" "+ref.String())
		}
	})
	defer remove()
	if err := e2b.New(o).Available(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	o.APIKey = "secret://env/RATH_E2B_TEST_UNSET"
	err := e2b.New(o).Available(testCtx(t))
	if !errors.Is(err, secret.ErrNotFound) || !strings.Contains(err.Error(), "secret://env/RATH_E2B_TEST_UNSET") {
		t.Fatalf("err = %v", err)
	}
	want := "sandbox e2b secret://env/RATH_E2B_TEST_KEY|sandbox e2b secret://env/RATH_E2B_TEST_UNSET"
	if strings.Join(seen, "|") != want {
		t.Fatalf("observed %q", seen)
	}
}
