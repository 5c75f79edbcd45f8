package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOwnCLI builds the program and uses it as its user would: its own
// workflow runs through the command line of package cli, and its session
// is listed and shown.
func TestOwnCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "own-cli")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "home")
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("own-cli %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}

	if out := run("run"); !strings.Contains(out, "count-words") || !strings.Contains(out, "[min-length=1]") {
		t.Fatalf("own-cli run lists no count-words:\n%s", out)
	}
	id := strings.TrimSpace(run("run", "count-words", "--input", "x", "--quiet"))
	if !regexp.MustCompile(`^ses_\w+$`).MatchString(id) {
		t.Fatalf("own-cli run --quiet printed %q, not a session id", id)
	}
	// A parameter it declares, and its outcome.
	if out := run("run", "count-words", "--input", "a bb ccc dddd", "--arg", "min-length=3"); !strings.HasPrefix(out, "answer     The text has 2 words.\n") ||
		!strings.Contains(out, "1 tool call: count_words") || !strings.Contains(out, "own-cli --home "+home+" show ses_") {
		t.Fatalf("own-cli run --arg min-length=3:\n%s", out)
	}
	if out := run("ls"); !strings.Contains(out, "count-words") || !strings.Contains(out, "closed") {
		t.Fatalf("own-cli ls does not list the closed count-words runs:\n%s", out)
	}
	if out := run("ls", "--all"); !strings.Contains(out, id) {
		t.Fatalf("own-cli ls --all does not list the output %s:\n%s", id, out)
	}
	if out := run("show", id); !strings.Contains(out, "The text has 1 words.") {
		t.Fatalf("own-cli show %s lacks the answer:\n%s", id, out)
	}

	// Errors name the program.
	var errb bytes.Buffer
	cmd := exec.Command(bin, "--home", home, "run", "nosuch")
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(errb.String(), "own-cli: unknown workflow") {
		t.Fatalf("own-cli run nosuch: %v, stderr %q", err, errb.String())
	}
}
