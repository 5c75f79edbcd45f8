package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor: with PATH emptied, Graphviz and Chromium are reported
// missing with the command that installs them; an API key is reported set
// without its value, a missing one with its fix; the store under the home
// is reachable.
func TestDoctor(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home) // the runtime sets it; restore it after
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", "")
	const secret = "sk-doctor-test-not-a-key"
	t.Setenv("OPENAI_API_KEY", secret)
	t.Setenv("ANTHROPIC_API_KEY", "")

	out := rathOK(t, home, "doctor")
	if strings.Contains(out, secret) {
		t.Fatalf("doctor shows an API key:\n%s", out)
	}
	for _, want := range []string{
		"store ", "is reachable",
		"graphviz ", "no dot on PATH", "fix: sudo apt-get install -y graphviz",
		"chromium ", "fix: sudo apt-get install -y chromium",
		"OPENAI_API_KEY is set",
		"fix: export ANTHROPIC_API_KEY=… or rath config set providers.anthropic.api_key …",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's report lacks %q:\n%s", want, out)
		}
	}

	var rep struct {
		OK     bool    `json:"ok"`
		Checks []check `json:"checks"`
	}
	raw := rathOK(t, home, "--json", "doctor")
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, secret) {
		t.Fatalf("doctor --json shows an API key:\n%s", raw)
	}
	got := map[string]check{}
	for _, c := range rep.Checks {
		got[c.Name] = c
	}
	if !rep.OK || !got["store"].OK || got["graphviz"].OK || got["graphviz"].Fix == "" || got["chromium"].OK ||
		!got["openai key"].OK || got["anthropic key"].OK || got["anthropic key"].Fix == "" {
		t.Errorf("doctor --json: %+v", rep)
	}
}

// TestDoctorUnreachableStore: a store that cannot be opened fails doctor
// (exit 1), its check saying so with a fix.
func TestDoctorUnreachableStore(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// No directory can be made under a file.
	code, out, errs := rathIn(t, home, "", "--store", "sqlite://"+file+"/rath.db", "doctor")
	if code != 1 || !strings.Contains(out, "store ") || !strings.Contains(out, "FAILED") || !strings.Contains(errs, "the store is unreachable") {
		t.Errorf("doctor on an unreachable store: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
