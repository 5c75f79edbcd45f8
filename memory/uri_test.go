package memory

import "testing"

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"memory://project/rath/a/b", "memory://user/ann/x", "memory://x", "memory://session//p", "http://a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			return
		}
		if err := u.Check(); err != nil {
			t.Fatalf("ParseURI(%q) accepted %+v that Check refuses: %v", s, u, err)
		}
		back, err := ParseURI(u.String())
		if err != nil || back != u || u.String() != s {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, u, u.String(), back, err)
		}
	})
}
