package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `rath config set sandboxes.…` writes what the remote backends read, and
// `rath config` never shows a key.
func TestConfigSetSandboxes(t *testing.T) {
	home := t.TempDir()
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"--home", home}, args...), strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	if _, errs, code := run("config", "set", "sandboxes.e2b.api_key", "k-secret"); code != 0 {
		t.Fatalf("set: %d %s", code, errs)
	}
	if _, errs, code := run("config", "set", "sandboxes.opensandbox.api_url", "http://os.example/v1"); code != 0 {
		t.Fatalf("set: %d %s", code, errs)
	}
	data, err := os.ReadFile(filepath.Join(home, "config.json"))
	if err != nil || !strings.Contains(string(data), "k-secret") || !strings.Contains(string(data), "http://os.example/v1") {
		t.Fatalf("config file %s (%v)", data, err)
	}
	out, _, code := run("config")
	if code != 0 || strings.Contains(out, "k-secret") || !strings.Contains(out, "api_key:set") || !strings.Contains(out, "http://os.example/v1") {
		t.Fatalf("config shows:\n%s", out)
	}
	for _, bad := range [][]string{{"sandboxes.local.api_key", "x"}, {"sandboxes.e2b.colour", "x"}} {
		if _, errs, code := run(append([]string{"config", "set"}, bad...)...); code != 2 || errs == "" {
			t.Fatalf("config set %v: %d %q", bad, code, errs)
		}
	}
}
