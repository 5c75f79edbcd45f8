package secret

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestEnv(t *testing.T) {
	ctx := t.Context()
	t.Setenv("RATH_SECRET_TEST_K", canary)
	t.Setenv("RATH_SECRET_TEST_EMPTY", "")
	rs := NewResolvers()
	v, err := rs.ResolveString(ctx, "secret://env/RATH_SECRET_TEST_K")
	if err != nil || v.Reveal() != canary || v.Ref().String() != "secret://env/RATH_SECRET_TEST_K" {
		t.Fatalf("%v %v", v.Ref(), err)
	}
	for _, name := range []string{"RATH_SECRET_TEST_EMPTY", "RATH_SECRET_TEST_UNSET_" + t.Name()} {
		_, err := rs.Resolve(ctx, Ref{Env, name})
		if !errors.Is(err, ErrNotFound) || !strings.HasPrefix(err.Error(), "secret://env/"+name+": ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// A private lookup.
	e := EnvResolver{Lookup: func(n string) (string, bool) { return "v-" + n, true }}
	if v, err := e.Resolve(ctx, Ref{Env, "X"}); err != nil || v.Reveal() != "v-X" {
		t.Fatalf("%v", err)
	}
}

func TestResolveString(t *testing.T) {
	ctx := t.Context()
	rs := NewResolvers()
	if v, err := rs.ResolveString(ctx, "sk-literal"); err != nil || v.Reveal() != "sk-literal" || !v.Ref().IsZero() {
		t.Fatalf("literal: %v", err)
	}
	if v, err := rs.ResolveString(ctx, ""); err != nil || !v.IsZero() {
		t.Fatalf("empty: %v", err)
	}
	for _, s := range []string{"secret:env/X", "SECRET://env/X", "secret://env/1"} {
		if _, err := rs.ResolveString(ctx, s); !errors.Is(err, ErrBadRef) {
			t.Errorf("%s: err = %v", s, err)
		}
	}
}

func TestRegistryAndObservers(t *testing.T) {
	ctx := WithPurpose(t.Context(), "test vault")
	rs := NewResolvers()
	vault := map[string]string{"kv/a": canary, "kv/empty": ""}
	err := rs.Register("vault", ResolverFunc(func(ctx context.Context, ref Ref) (Value, error) {
		v, ok := vault[ref.Name]
		if !ok {
			return Value{}, ErrNotFound
		}
		return NewValue(v, Ref{}), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vault", "env", "Vault", "", "1x"} {
		if err := rs.Register(name, EnvResolver{}); err == nil {
			t.Errorf("Register(%q) accepted", name)
		}
	}
	if err := rs.Register("x", nil); err == nil {
		t.Error("nil resolver accepted")
	}
	if got := strings.Join(rs.Names(), ","); got != "env,file,vault" {
		t.Errorf("names %s", got)
	}

	type seen struct {
		ref     string
		purpose string
		err     error
	}
	var mu sync.Mutex
	var log []seen
	remove := rs.Observe(func(ctx context.Context, ref Ref, err error) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, seen{ref.String(), Purpose(ctx), err})
	})
	v, err := rs.Resolve(ctx, MustParse("secret://vault/kv/a"))
	if err != nil || v.Reveal() != canary || v.Ref().String() != "secret://vault/kv/a" {
		t.Fatalf("%v %v", v.Ref(), err)
	}
	_, errMissing := rs.Resolve(ctx, MustParse("secret://vault/kv/b"))
	_, errEmpty := rs.Resolve(ctx, MustParse("secret://vault/kv/empty"))
	_, errUnknown := rs.Resolve(ctx, MustParse("secret://nope/x"))
	if !errors.Is(errMissing, ErrNotFound) || !errors.Is(errEmpty, ErrNotFound) || !errors.Is(errUnknown, ErrUnknownResolver) {
		t.Fatalf("errors: %v / %v / %v", errMissing, errEmpty, errUnknown)
	}
	if !strings.Contains(errUnknown.Error(), "registered: env, file, vault") || !strings.HasPrefix(errUnknown.Error(), "secret://nope/x: ") {
		t.Errorf("unknown: %v", errUnknown)
	}
	if _, err := rs.Resolve(ctx, Ref{Resolver: "env", Name: "1"}); !errors.Is(err, ErrBadRef) {
		t.Errorf("bad ref: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := rs.Resolve(cancelled, MustParse("secret://vault/kv/a")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	remove()
	_, _ = rs.Resolve(ctx, MustParse("secret://vault/kv/a"))
	// A literal is no resolution.
	_, _ = rs.ResolveString(ctx, "literal")

	mu.Lock()
	defer mu.Unlock()
	if len(log) != 6 {
		t.Fatalf("observed %d resolutions: %+v", len(log), log)
	}
	for i, want := range []string{"secret://vault/kv/a", "secret://vault/kv/b", "secret://vault/kv/empty", "secret://nope/x", "secret://env/1", "secret://vault/kv/a"} {
		if log[i].ref != want || log[i].purpose != "test vault" || (i == 0) != (log[i].err == nil) {
			t.Errorf("observation %d: %+v", i, log[i])
		}
		if log[i].err != nil && strings.Contains(log[i].err.Error(), canary) {
			t.Errorf("an error holds the value: %v", log[i].err)
		}
	}
}

func TestDefault(t *testing.T) {
	ctx := t.Context()
	t.Setenv("RATH_SECRET_TEST_D", canary)
	var n int
	var mu sync.Mutex
	remove := Observe(func(context.Context, Ref, error) { mu.Lock(); n++; mu.Unlock() })
	defer remove()
	if v, err := ResolveString(ctx, "secret://env/RATH_SECRET_TEST_D"); err != nil || v.Reveal() != canary {
		t.Fatal(err)
	}
	if v, err := Resolve(ctx, MustParse("secret://env/RATH_SECRET_TEST_D")); err != nil || v.Reveal() != canary {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 2 || Default() == nil {
		t.Fatalf("observed %d", n)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Register of a taken name did not panic")
			}
		}()
		Register(Env, EnvResolver{})
	}()
}

func TestFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) Ref {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return MustParse("secret://file" + filepath.ToSlash(p))
	}
	rs := NewResolvers()
	for content, want := range map[string]string{
		canary + "\n":   canary,
		canary + "\r\n": canary,
		canary:          canary,
		canary + "\n\n": canary + "\n",
		" a b \n":       " a b ",
	} {
		ref := write("k", content, 0o600)
		v, err := rs.Resolve(ctx, ref)
		if err != nil || v.Reveal() != want {
			t.Errorf("%q: got %q, %v", content, v.Reveal(), err)
		}
	}
	if _, err := rs.Resolve(ctx, write("empty", "\n", 0o600)); !errors.Is(err, ErrNotFound) {
		t.Errorf("empty: %v", err)
	}
	if _, err := rs.Resolve(ctx, MustParse("secret://file"+filepath.ToSlash(dir)+"/missing")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	big := write("big", strings.Repeat("x", MaxFileSize+1), 0o600)
	if _, err := rs.Resolve(ctx, big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: %v", err)
	}
	if v, err := (FileResolver{MaxSize: 1 << 20}).Resolve(ctx, big); err != nil || len(v.Reveal()) != MaxFileSize+1 {
		t.Errorf("big with a larger bound: %v", err)
	}
	if _, err := rs.Resolve(ctx, MustParse("secret://file"+filepath.ToSlash(dir))); !errors.Is(err, ErrUnsafe) {
		t.Errorf("directory: %v", err)
	}
	// A symbolic link is followed.
	target := write("target", canary, 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/"+target.Name, link); err != nil {
		t.Fatal(err)
	}
	if v, err := rs.Resolve(ctx, MustParse("secret://file"+filepath.ToSlash(link))); err != nil || v.Reveal() != canary {
		t.Errorf("link: %v", err)
	}
	// Errors name the path, never the content.
	for _, ref := range []Ref{write("wopen", canary, 0o666), big} {
		_, err := rs.Resolve(ctx, ref)
		if err == nil || strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "xxxx") || !strings.Contains(err.Error(), ref.String()) {
			t.Errorf("%s: err = %v", ref, err)
		}
	}
}
