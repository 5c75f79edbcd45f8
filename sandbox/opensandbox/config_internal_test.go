package opensandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// An OpenSandbox named only in rath's config file is configured from it.
func TestSettingsFromTheConfigFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"OPEN_SANDBOX_API_URL", "OPEN_SANDBOX_API_KEY", "OPEN_SANDBOX_IMAGE", "OPEN_SANDBOX_DOMAIN"} {
		t.Setenv(k, "")
	}
	b := &Backend{}
	if b.configured() {
		t.Fatal("configured with neither environment nor file")
	}
	body := `{"sandboxes":{"opensandbox":{"api_url":"https://os.example/v1","api_key":"file-key","image":"debian:12"}}}`
	if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if !b.configured() {
		t.Fatal("not configured by the config file")
	}
	a, err := b.client()
	if err != nil || a.o.APIURL != "https://os.example/v1" || a.o.APIKey != "file-key" || a.o.Image != "debian:12" {
		t.Fatalf("options from the file: %+v, %v", a, err)
	}
}
