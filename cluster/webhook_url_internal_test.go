package cluster

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// TestRedactURL: credentials are replaced, the rest kept.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@hooks.example.com/x?a=1": "https://user:xxxxx@hooks.example.com/x?a=1",
		"https://token@hooks.example.com/x":         "https://xxxxx@hooks.example.com/x",
		"https://user:@hooks.example.com/":          "https://user:xxxxx@hooks.example.com/",
		"https://hooks.example.com/x":               "https://hooks.example.com/x",
		"http://a%3Ab:c%40d@h.example/":             "http://a%3Ab:xxxxx@h.example/",
		"http://x:y@[::1 ":                          "",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	_, err := parseWebhookURL("http://u:pa55word@[::1 /x")
	if !errors.Is(err, ErrBadWebhook) || strings.Contains(err.Error(), "pa55word") {
		t.Errorf("a URL that does not parse: %v", err)
	}
	if err := checkWebhook("ftp://u:pa55word@h.example/", nil); !errors.Is(err, ErrBadWebhook) || strings.Contains(err.Error(), "pa55word") {
		t.Errorf("an ftp URL: %v", err)
	}
}

// FuzzRedactURL: whatever the URL, its redaction parses, and holds no
// password and no lone user name but "xxxxx".
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"https://user:pass@h.example/x", "https://tok@h.example", "http://h.example", "http://a%40:b%3A@h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out := RedactURL(raw)
		if out == "" {
			return
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("RedactURL(%q) = %q does not parse: %v", raw, out, err)
		}
		if u.User == nil {
			return
		}
		if p, ok := u.User.Password(); ok && p != redactedSecret {
			t.Fatalf("RedactURL(%q) = %q keeps a password", raw, out)
		}
		if _, ok := u.User.Password(); !ok && u.User.Username() != redactedSecret {
			t.Fatalf("RedactURL(%q) = %q keeps a lone user name", raw, out)
		}
	})
}
