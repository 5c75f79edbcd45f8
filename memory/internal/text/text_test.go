package text

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"café naïve":              {"cafe", "naive"},
		`" OR "NEAR(a b)`:         {"OR", "NEAR", "a", "b"},
		"SQLite's WAL-mode, v3.4": {"SQLite", "s", "WAL", "mode", "v3", "4"},
		"":                        nil,
		"--- ***":                 nil,
	} {
		if got := Words(in); !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTermsAreLowerCase(t *testing.T) {
	if got := Terms("Crème BRÛLÉE Ωmega"); !slices.Equal(got, []string{"creme", "brulee", "ωmega"}) {
		t.Fatalf("Terms = %q", got)
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"café", "a\x00b", "\xff\xfe", "NEAR(x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range Terms(s) {
			if w == "" {
				t.Fatalf("an empty term from %q", s)
			}
		}
	})
}
