package e2b

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The config file fills what the environment leaves empty; the
// environment wins; a file others can read is refused.
func TestSettingsFromTheConfigFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"E2B_API_KEY", "E2B_API_URL", "E2B_DOMAIN", "E2B_TEMPLATE", "CUBE_API_URL", "CUBE_API_KEY", "CUBE_DOMAIN", "CUBE_CA_FILE", "CUBE_TEMPLATE"} {
		t.Setenv(k, "")
	}
	path := filepath.Join(home, "config.json")
	write := func(mode os.FileMode, body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(0o600, `{"default_model":"x","sandboxes":{"e2b":{"api_key":"file-key","domain":"e2b.example","template":"py"},"cube":{"api_url":"https://cube.example:3000"}}}`)
	a, err := (&Backend{provider: E2B}).client()
	if err != nil {
		t.Fatal(err)
	}
	if a.o.APIKey != "file-key" || a.o.Domain != "e2b.example" || a.o.APIURL != "https://api.e2b.example" || a.o.Template != "py" {
		t.Fatalf("options from the file: %+v", a.o)
	}
	if c, err := (&Backend{provider: Cube}).client(); err != nil || c.o.APIURL != "https://cube.example:3000" {
		t.Fatalf("cube from the file: %+v, %v", c, err)
	}
	t.Setenv("E2B_API_KEY", "env-key")
	if a, err = (&Backend{provider: E2B}).client(); err != nil || a.o.APIKey != "env-key" || a.o.Domain != "e2b.example" {
		t.Fatalf("the environment does not win: %+v, %v", a, err)
	}
	write(0o644, `{"sandboxes":{"e2b":{"api_key":"file-key"}}}`)
	if _, err := (&Backend{provider: E2B}).client(); err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "file-key") {
		t.Fatalf("a config file others can read: %v", err)
	}
	write(0o600, `{"sandboxes":{"e2b":{"api_key":7}}}`)
	if _, err := (&Backend{provider: E2B}).client(); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a malformed sandboxes section: %v", err)
	}
}
