package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/openrath/rath/secret"
	"github.com/openrath/rath/store"
)

// TestSecretRoots: which references a scope may name, by its roots.
func TestSecretRoots(t *testing.T) {
	rs, err := parseSecretRoots([]string{"acme=secret://file/run/secrets/acme", "acme/web=secret://env/ACME_WEB_",
		"globex=secret://vault/kv/globex", "solo=secret://file/etc/solo.key"})
	if err != nil {
		t.Fatal(err)
	}
	web, api, globex := store.Scope{Tenant: "acme", Project: "web"}, store.Scope{Tenant: "acme", Project: "api"}, store.Scope{Tenant: "globex", Project: "x"}
	for _, c := range []struct {
		sc  store.Scope
		ref string
		ok  bool
	}{
		{web, "secret://file/run/secrets/acme/hook", true},
		{api, "secret://file/run/secrets/acme/deep/er", true},
		{web, "secret://file/run/secrets/acme", true},
		{web, "secret://file/run/secrets/acme-evil/hook", false},
		{web, "secret://file/run/secrets/globex/hook", false},
		{web, "secret://file/etc/shadow", false},
		{web, "secret://env/ACME_WEB_HOOK", true},
		{api, "secret://env/ACME_WEB_HOOK", false},
		{web, "secret://env/HOME", false},
		{web, "secret://env/ACME_WE", false},
		{globex, "secret://vault/kv/globex/hook", true},
		{globex, "secret://vault/kv/globexx", false},
		{globex, "secret://file/run/secrets/acme/hook", false},
		{store.Scope{Tenant: "solo", Project: "p"}, "secret://file/etc/solo.key", true},
		{store.Scope{Tenant: "solo", Project: "p"}, "secret://file/etc/solo.key2", false},
		{store.Scope{Tenant: "other", Project: "web"}, "secret://file/run/secrets/acme/hook", false},
		{web, "secret://file/run/secrets/acme/../../../etc/shadow", false},
		{web, "not a reference", false},
	} {
		if got := rs.allows(c.sc, c.ref); got != c.ok {
			t.Errorf("%s naming %s: %v, want %v", c.sc, c.ref, got, c.ok)
		}
	}
	for _, bad := range []string{"", "acme", "acme=", "=secret://env/X", "acme=secret://env/", "a b=secret://env/X",
		"acme/=secret://env/X", "acme=secret://file//etc", "acme=/etc/shadow", "acme/web/x=secret://env/X"} {
		if _, err := parseSecretRoots([]string{bad}); !errors.Is(err, ErrBadWebhook) {
			t.Errorf("root %q: %v, want ErrBadWebhook", bad, err)
		}
	}
}

// TestSecretRootsResolve: within its root a reference resolves; whatever
// else — outside every root, a missing file, a file anyone may write, a
// symbolic link leading out of the root, an unset variable — fails with
// ErrSecretNotAllowed, which the deliveries list shows as one category.
func TestSecretRootsResolve(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write := func(p, s string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "key"), "the-key\n", 0o600)
	write(filepath.Join(dir, "open"), "anyone's", 0o666)
	outside := filepath.Join(t.TempDir(), "outside")
	write(outside, "not-the-tenant's", 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("key", filepath.Join(dir, "in")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RATH_TEST_SROOT_KEY", "env-key")
	t.Setenv("RATH_TEST_OTHER", "not-granted")
	rs, err := parseSecretRoots([]string{"acme=secret://file" + dir, "acme=secret://env/RATH_TEST_SROOT_"})
	if err != nil {
		t.Fatal(err)
	}
	sc := store.Scope{Tenant: "acme", Project: "web"}
	ctx := context.Background()
	for ref, want := range map[string]string{"secret://file" + dir + "/key": "the-key", "secret://file" + dir + "/in": "the-key",
		"secret://env/RATH_TEST_SROOT_KEY": "env-key"} {
		v, err := rs.resolve(ctx, sc, ref)
		if err != nil || v.Reveal() != want {
			t.Errorf("%s: %v", ref, err)
		}
	}
	for _, ref := range []string{"secret://file" + dir + "/missing", "secret://file" + dir + "/open", "secret://file" + dir + "/out",
		"secret://file" + outside, "secret://env/RATH_TEST_SROOT_UNSET", "secret://env/RATH_TEST_OTHER", "secret://file/etc/shadow"} {
		_, err := rs.resolve(ctx, sc, ref)
		if !errors.Is(err, ErrSecretNotAllowed) {
			t.Errorf("%s: %v, want ErrSecretNotAllowed", ref, err)
		}
	}
	if _, err := rs.resolve(ctx, store.Scope{Tenant: "globex", Project: "web"}, "secret://file"+dir+"/key"); !errors.Is(err, ErrSecretNotAllowed) {
		t.Errorf("another tenant: %v, want ErrSecretNotAllowed", err)
	}
	if deliverySecret != "signing secret: "+ErrSecretNotAllowed.Error() || publicError(deliverySecret) != deliverySecret {
		t.Errorf("the category %q does not read as the error, or is not shown", deliverySecret)
	}
}

// FuzzSecretRoot: whatever the entry, parsing does not panic, its errors
// wrap ErrBadWebhook, and an accepted root allows its own reference to its
// scope and nothing to another tenant.
func FuzzSecretRoot(f *testing.F) {
	for _, s := range []string{"acme=secret://file/run/secrets/acme", "acme/web=secret://env/ACME_", "x=secret://vault/k", "=", "a/b/c=secret://env/X"} {
		f.Add(s, "secret://file/run/secrets/acme/k")
	}
	f.Fuzz(func(t *testing.T, entry, ref string) {
		r, err := parseSecretRoot(entry)
		if err != nil {
			if !errors.Is(err, ErrBadWebhook) {
				t.Fatalf("%q: %v does not wrap ErrBadWebhook", entry, err)
			}
			return
		}
		rs := secretRoots{r}
		sc := store.Scope{Tenant: r.tenant, Project: r.project}
		if sc.Project == "" {
			sc.Project = "p"
		}
		if !rs.allows(sc, r.root.String()) {
			t.Fatalf("%q does not allow its own root", entry)
		}
		if rs.allows(store.Scope{Tenant: r.tenant + "x", Project: sc.Project}, ref) {
			t.Fatalf("%q allows %q to another tenant", entry, ref)
		}
		if p, err := secret.Parse(ref); err == nil && rs.allows(sc, ref) && p.Resolver != r.root.Resolver {
			t.Fatalf("%q allows %q of another resolver", entry, ref)
		}
	})
}
