package builtin

import (
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
)

// A result whose output was cut says so, on a line of its own.
func TestFormatResultMarksCutOutput(t *testing.T) {
	got := formatResult(sandbox.Result{ExitCode: 0, Stdout: []byte("kept"), Stderr: []byte("no newline"), Dropped: 1234})
	want := "exit code 0\n--- stdout\nkept\n--- stderr\nno newline\n--- output cut: 1234 bytes past the first 16 MiB of a stream were not kept\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if s := formatResult(sandbox.Result{Stdout: []byte("all\n")}); strings.Contains(s, "cut") {
		t.Fatalf("an uncut result says it was cut: %q", s)
	}
}
