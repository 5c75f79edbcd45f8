package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openrath/rath/audit"
	"github.com/openrath/rath/secret"
)

// TestSecretResolutionsAudited: while the command line's runtime is open,
// every secret resolution — resolved or not — is an audit record naming
// the reference and its purpose, never the value; after it closes, none is.
func TestSecretResolutionsAudited(t *testing.T) {
	const value = "rath-audit-canary-7d1e"
	t.Setenv("RATH_TEST_AUDITED_KEY", value)
	home := filepath.Join(t.TempDir(), "home")
	a := newApp(strings.NewReader(""), io.Discard, io.Discard, options{name: "rath"})
	a.home = home
	ctx := context.Background()
	rt, err := a.runtime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pctx := secret.WithPurpose(ctx, "model openai")
	if v, err := secret.ResolveString(pctx, "secret://env/RATH_TEST_AUDITED_KEY"); err != nil || v.Reveal() != value {
		t.Fatalf("resolve: %v", err)
	}
	if _, err := secret.ResolveString(pctx, "secret://env/RATH_TEST_NO_SUCH_KEY"); err == nil {
		t.Fatal("an unset variable resolved")
	}
	st := rt.Store
	recs, err := audit.List(ctx, st, audit.Filter{Kind: audit.KindSecret})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if strings.Contains(r.Reason+r.Resource, value) {
			t.Fatalf("an audit record holds the secret's value: %+v", r)
		}
		got = append(got, r.Resource+" "+r.Outcome+" "+r.Reason)
	}
	joined := strings.Join(got, "\n")
	if len(recs) != 2 || !strings.Contains(joined, "secret://env/RATH_TEST_AUDITED_KEY ok model openai") ||
		!strings.Contains(joined, "secret://env/RATH_TEST_NO_SUCH_KEY failed model openai") {
		t.Fatalf("secret records:\n%s", joined)
	}
	if err := a.rt.Close(); err != nil {
		t.Fatal(err)
	}
	a.rt = nil
	if _, err := secret.ResolveString(pctx, "secret://env/RATH_TEST_AUDITED_KEY"); err != nil {
		t.Fatal(err) // no observer left behind to write to a closed log
	}
}
