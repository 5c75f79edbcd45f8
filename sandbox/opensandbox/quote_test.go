package opensandbox

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// parsedBack runs shellCommand(argv) in a real shell whose program prints
// each argument it got, NUL-terminated, and returns them.
func parsedBack(t testing.TB, argv []string) []string {
	t.Helper()
	full := append([]string{"printf", `%s\0`}, argv...)
	out, err := exec.Command("sh", "-c", shellCommand(full)).Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", shellCommand(full), err)
	}
	got := strings.Split(string(out), "\x00")
	return got[:len(got)-1]
}

func TestShellCommandRoundTrip(t *testing.T) {
	hostile := []string{
		"plain", "", " ", "two words", "it's", "'", "''", `"`, `\`, `\'`, "$HOME", "${PATH}", "`id`", "$(id)",
		"a;b", "a|b", "a&&b", "*", "?", "[a]", "~", "#not a comment", "-n", "--", "new\nline", "tab\there",
		"ünïcödé", "!bang", "a\rb", "%s",
	}
	got := parsedBack(t, hostile)
	if !slices.Equal(got, hostile) {
		t.Fatalf("the shell parsed back\n%q\nwant\n%q", got, hostile)
	}
}

func FuzzShellCommand(f *testing.F) {
	for _, s := range []string{"", "'", `a'b"c`, "$(rm -rf /)", "\n"} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		// A shell argument is a C string: it cannot hold a NUL.
		if strings.ContainsRune(a+b, 0) || !utf8.ValidString(a+b) {
			t.Skip()
		}
		argv := []string{a, b}
		if got := parsedBack(t, argv); !slices.Equal(got, argv) {
			t.Fatalf("parsed back %q, want %q", got, argv)
		}
	})
}

func TestEventsReadsExecdFrames(t *testing.T) {
	stream := strings.Join([]string{
		`{"type":"init","text":"cmd-1","timestamp":1}`, "",
		`: a comment`, "",
		`{"type":"stdout","text":"hello","timestamp":2}`, "",
		`data: {"type":"stderr","text":"warn"}`, "",
		`{"type":"stdout","text":"\n"}`, "",
		`not json`, "",
		`{"type":"error","error":{"ename":"CommandExecError","evalue":"3","traceback":["exit status 3"]}}`, "", "",
	}, "\n")
	evs := newEvents(strings.NewReader(stream))
	var out, errb bytes.Buffer
	var code int
	for {
		ev, err := evs.next()
		if err != nil {
			t.Fatalf("stream ended before the exit: %v", err)
		}
		switch ev.Type {
		case "stdout":
			writeLine(&out, ev.Text)
			continue
		case "stderr":
			writeLine(&errb, ev.Text)
			continue
		case "error":
			code, err = exitCode(ev.Error)
			if err != nil {
				t.Fatal(err)
			}
		default:
			continue
		}
		break
	}
	if out.String() != "hello\n\n" || errb.String() != "warn\n" || code != 3 {
		t.Fatalf("stdout %q stderr %q code %d", out.String(), errb.String(), code)
	}
	if _, err := evs.next(); err == nil {
		t.Fatal("an event after the end")
	}
}

func TestExitCodeOfAFailedStart(t *testing.T) {
	_, err := exitCode(&eventError{EName: "CommandExecError", EValue: "fork/exec /bin/bash: no such file or directory"})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("a command that did not start: %v", err)
	}
	if _, err := exitCode(nil); err == nil {
		t.Fatal("an error event without its error was read as an exit")
	}
}

func FuzzEvents(f *testing.F) {
	f.Add([]byte("{\"type\":\"stdout\",\"text\":\"a\"}\n\n{\"type\":\"execution_complete\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"error\":{\"evalue\":\"1\"}}\n\n"))
	f.Add([]byte(":\n\nevent: x\nid: 1\n\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs := newEvents(bytes.NewReader(b))
		for i := 0; ; i++ {
			ev, err := evs.next()
			if err != nil {
				if _, again := evs.next(); again == nil {
					t.Fatal("an event after the stream's end")
				}
				return
			}
			if i > len(b) {
				t.Fatalf("%d events from %d bytes", i, len(b))
			}
			if ev.Type == "error" {
				_, _ = exitCode(ev.Error)
			}
		}
	})
}
