package cli

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunProgress: on a terminal a run's progress line counts its steps,
// tool calls and tokens; piped, stderr has only the line naming the run.
func TestRunProgress(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("RATH_HOME", home) // the runtime sets it; restore it after
	run := func(terminal bool) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		o := func(o *options) { o.isTerminal = func(io.Writer) bool { return terminal } }
		if code := Run(context.Background(), []string{"--home", home, "run", "adder"}, strings.NewReader(""), &out, &errb, o); code != 0 {
			t.Fatalf("run adder: exit %d\n%s", code, errb.String())
		}
		return out.String(), errb.String()
	}

	out, errs := run(true)
	if !regexp.MustCompile(`run adder ses_\w+: done in \S+ · 2 steps, 1 tool call, 46 tokens\n$`).MatchString(errs) {
		t.Errorf("on a terminal, the progress line does not end with the run's counts:\n%q", errs)
	}
	if !strings.HasPrefix(out, "answer ") {
		t.Errorf("stdout on a terminal: %q", out)
	}

	_, errs = run(false)
	if !regexp.MustCompile(`^run adder ses_\w+…\n$`).MatchString(errs) {
		t.Errorf("piped, stderr is more than the line naming the run:\n%q", errs)
	}
}
