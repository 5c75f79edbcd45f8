package secret

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]Ref{
		"secret://env/OPENAI_API_KEY":      {Env, "OPENAI_API_KEY"},
		"secret://env/_x1":                 {Env, "_x1"},
		"secret://file/run/secrets/openai": {File, "run/secrets/openai"},
		"secret://file/etc/my key":         {File, "etc/my key"},
		"secret://vault/kv/data/x#field":   {"vault", "kv/data/x#field"},
		"secret://aws-sm/prod/db?v=3":      {"aws-sm", "prod/db?v=3"},
		"secret://v2_x/a//b/../c":          {"v2_x", "a//b/../c"}, // opaque to others than file
	}
	for s, want := range good {
		got, err := Parse(s)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", s, got, err, want)
			continue
		}
		if got.String() != s {
			t.Errorf("%q printed back as %q", s, got.String())
		}
		if !IsRef(s) {
			t.Errorf("IsRef(%q) false", s)
		}
	}
	bad := []string{
		"", "secret:", "secret:/env/X", "secret:env/X", "SECRET://env/X", "secret://ENV/X", "secret://env",
		"secret://env/", "secret:///X", "secret://env/1X", "secret://env/A-B", "secret://env/A B",
		"secret://file/", "secret://file//etc/x", "secret://file/etc/../x", "secret://file/./x", "secret://file/etc/",
		"secret://file/a/./b", "secret://9v/x", "secret://v!/x", "secret://vault/a\nb", "secret://vault/a\tb",
		"secret://vault/ x", "secret://vault/x ", "secret://vault/\x00", "secret://vault/\xff",
		"secret://" + strings.Repeat("a", 65) + "/x", "secret://vault/" + strings.Repeat("x", MaxRefLen),
		"env/X", "https://env/X",
	}
	for _, s := range bad {
		if r, err := Parse(s); !errors.Is(err, ErrBadRef) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrBadRef", s, r, err)
		}
	}
	for s, want := range map[string]bool{"secret:x": true, "Secret://env/X": true, "secret": false, "sk-123": false, "": false, " secret://env/X": false} {
		if IsRef(s) != want {
			t.Errorf("IsRef(%q) = %v", s, !want)
		}
	}
}

func TestRefText(t *testing.T) {
	var v struct {
		R Ref `json:"r"`
	}
	if err := json.Unmarshal([]byte(`{"r":"secret://env/K"}`), &v); err != nil || v.R != (Ref{Env, "K"}) {
		t.Fatalf("%+v %v", v, err)
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) != `{"r":"secret://env/K"}` {
		t.Fatalf("%s %v", b, err)
	}
	if err := json.Unmarshal([]byte(`{"r":"secret://env/"}`), &v); !errors.Is(err, ErrBadRef) {
		t.Fatalf("err = %v", err)
	}
	if _, err := (Ref{Resolver: "env", Name: "1"}).MarshalText(); !errors.Is(err, ErrBadRef) {
		t.Fatalf("err = %v", err)
	}
	if !(Ref{}).IsZero() || MustParse("secret://env/K").IsZero() {
		t.Fatal("IsZero")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"secret://env/K", "secret://file/run/secrets/k", "secret://vault/a/b#c?d=1",
		"secret://file//x", "secret://file/a/../b", "secret:", "SECRET://env/x", "secret://env/A B", "secret://a/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrBadRef) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrBadRef", s, err)
			}
			return
		}
		// A parsed reference prints back as written, parses to itself,
		// and is one IsRef recognizes.
		if r.String() != s || !IsRef(s) {
			t.Fatalf("Parse(%q) = %+v, printed %q", s, r, r.String())
		}
		if again, err := Parse(r.String()); err != nil || again != r {
			t.Fatalf("round trip of %q: %+v, %v", s, again, err)
		}
		if len(s) > MaxRefLen || r.Resolver == "" || r.Name == "" {
			t.Fatalf("Parse(%q) accepted %+v", s, r)
		}
		if r.Resolver == File && (strings.Contains(r.Name, "//") || strings.Contains("/"+r.Name+"/", "/../") || strings.Contains("/"+r.Name+"/", "/./")) {
			t.Fatalf("Parse(%q) accepted an unclean path", s)
		}
		if _, err := r.MarshalText(); err != nil {
			t.Fatalf("MarshalText of %q: %v", s, err)
		}
	})
}
