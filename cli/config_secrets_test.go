package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `rath config set` keeps a secret reference as written and refuses a
// malformed one; `rath config` (text and JSON) shows references and never
// a key — neither a provider's, nor a sandbox's, nor an unknown setting's.
func TestConfigSecretReferences(t *testing.T) {
	home := t.TempDir()
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"--home", home}, args...), strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	for _, kv := range [][2]string{
		{"providers.openai.api_key", "secret://env/RATH_CLI_TEST_OPENAI"},
		{"providers.anthropic.api_key", "sk-ant-VALUE-NOT-SHOWN-1"},
		{"sandboxes.e2b.api_key", "secret://file/run/secrets/e2b"},
		{"sandboxes.opensandbox.api_key", "os-VALUE-NOT-SHOWN-2"},
	} {
		if _, errs, code := run("config", "set", kv[0], kv[1]); code != 0 {
			t.Fatalf("set %s: %d %s", kv[0], code, errs)
		}
	}
	for _, kv := range [][2]string{
		{"providers.openai.api_key", "secret://env/"},
		{"providers.openai.api_key", "secret:env/X"},
		{"sandboxes.e2b.api_key", "secret://file//etc/x"},
	} {
		if _, errs, code := run("config", "set", kv[0], kv[1]); code != 2 || !strings.Contains(errs, "secret: bad reference") {
			t.Errorf("set %s %s: %d %q", kv[0], kv[1], code, errs)
		}
	}
	path := filepath.Join(home, "config.json")
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `"secret://env/RATH_CLI_TEST_OPENAI"`) || !strings.Contains(string(data), `"secret://file/run/secrets/e2b"`) {
		t.Fatalf("config file %s (%v)", data, err)
	}
	// A provider setting this build does not know is kept, never shown.
	data = bytes.Replace(data, []byte(`"api_key": "sk-ant-VALUE-NOT-SHOWN-1"`), []byte(`"api_key": "sk-ant-VALUE-NOT-SHOWN-1", "api_secret": "VALUE-NOT-SHOWN-3"`), 1)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"config"}, {"--json", "config"}} {
		out, errs, code := run(args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		if strings.Contains(out, "VALUE-NOT-SHOWN") {
			t.Errorf("%v shows a key:\n%s", args, out)
		}
		if !strings.Contains(out, "secret://env/RATH_CLI_TEST_OPENAI") || !strings.Contains(out, "secret://file/run/secrets/e2b") {
			t.Errorf("%v does not show the references:\n%s", args, out)
		}
	}
}
