package seal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newKey(t testing.TB, b byte) *Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{b}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSeal: a value opens with its key for its place only, and its sealed
// form does not hold it.
func TestSeal(t *testing.T) {
	k, other := newKey(t, 1), newKey(t, 2)
	value := []byte("the-signing-key-CANARY")
	s := k.Seal(value, []byte("webhook ses_1 secret"))
	if !IsSealed(s) || strings.Contains(s, string(value)) || s == k.Seal(value, []byte("webhook ses_1 secret")) {
		t.Fatalf("sealed %q", s)
	}
	got, err := k.Open(s, []byte("webhook ses_1 secret"))
	if err != nil || string(got) != string(value) {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := k.Open(s, []byte("webhook ses_2 secret")); !errors.Is(err, ErrTampered) {
		t.Errorf("another place: %v, want ErrTampered", err)
	}
	if _, err := other.Open(s, []byte("webhook ses_1 secret")); !errors.Is(err, ErrWrongKey) || !strings.Contains(err.Error(), k.ID()) {
		t.Errorf("another key: %v, want ErrWrongKey naming %s", err, k.ID())
	}
	flipped := []byte(s)
	flipped[len(flipped)-3] ^= 'A' ^ 'B'
	if _, err := k.Open(string(flipped), []byte("webhook ses_1 secret")); err == nil {
		t.Error("an altered value opened")
	}
	for _, bad := range []string{"", "plain", Prefix, Prefix + "zz:", Prefix + k.ID() + ":!!", Prefix + k.ID() + ":AAAA"} {
		if _, err := k.Open(bad, nil); !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrWrongKey) {
			t.Errorf("%q: %v, want ErrMalformed", bad, err)
		}
	}
}

// TestLoadKey: the key file is created once, mode 0600, and read back; a
// file others may write, or that does not hold a key, is refused; many
// processes creating it at once agree on one key.
func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "home", "webhook.key")
	k1, err := LoadKey(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st.Mode(), err)
	}
	k2, err := LoadKey(p)
	if err != nil || k2.ID() != k1.ID() {
		t.Fatalf("read back: %v %v", k2, err)
	}
	if _, err := k2.Open(k1.Seal([]byte("v"), nil), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(p); !errors.Is(err, ErrBadKey) {
		t.Errorf("a key file anyone may write: %v, want ErrBadKey", err)
	}
	bad := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(bad, []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(bad); !errors.Is(err, ErrBadKey) {
		t.Errorf("a key file without a key: %v, want ErrBadKey", err)
	}

	race := filepath.Join(dir, "race.key")
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			k, err := LoadKey(race)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = k.ID()
		})
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("keys differ: %v", ids)
		}
	}
}

// FuzzOpen: whatever the string, Open does not panic, opens only what Seal
// made, and whatever Seal makes opens.
func FuzzOpen(f *testing.F) {
	k := newKey(f, 7)
	f.Add(k.Seal([]byte("v"), []byte("ad")), []byte("v"), []byte("ad"))
	f.Add("sealed:v1:", []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, s string, value, ad []byte) {
		if got, err := k.Open(s, ad); err == nil && !IsSealed(s) {
			t.Fatalf("%q opened to %q without the prefix", s, got)
		}
		got, err := k.Open(k.Seal(value, ad), ad)
		if err != nil || !bytes.Equal(got, value) {
			t.Fatalf("a sealed value does not open: %v", err)
		}
	})
}
