package builtin

import (
	"testing"

	"github.com/openrath/rath/sandbox"
)

// A result whose output the sandbox cut is formatted from what was kept,
// nothing added: the cut is a note (cutNote), not output.
func TestFormatResultKeepsCutToANote(t *testing.T) {
	r := sandbox.Result{ExitCode: 0, Stdout: []byte("kept"), Stderr: []byte("no newline"), Dropped: 1234}
	if got, want := formatResult(r), "exit code 0\n--- stdout\nkept\n--- stderr\nno newline"; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got, want := cutNote(r), "the command's output was cut: 1234 bytes past the first 16 MiB of a stream were not kept"; got != want {
		t.Fatalf("note %q\nwant %q", got, want)
	}
}
