package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/local"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/tool"
)

func env(t *testing.T) tool.Env {
	t.Helper()
	t.Setenv("RATH_HOME", t.TempDir())
	s, err := local.Backend{}.Open(context.Background(), session.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return tool.Env{Sandbox: s, CallID: "c1"}
}

func call(t *testing.T, e tool.Env, tl tool.Tool, args string) (string, error) {
	t.Helper()
	return tl.Call(context.Background(), e, json.RawMessage(args))
}

func mustCall(t *testing.T, e tool.Env, tl tool.Tool, args string) string {
	t.Helper()
	out, err := call(t, e, tl, args)
	if err != nil {
		t.Fatalf("%s %s: %v", tl.Name(), args, err)
	}
	return out
}

func TestFileTools(t *testing.T) {
	e := env(t)
	mustCall(t, e, WriteFile(), `{"path":"src/a.go","content":"package a\n\nfunc A() int { return 1 }\n\nfunc B() int { return 1 }\n"}`)
	if out := mustCall(t, e, ReadFile(), `{"path":"src/a.go","from":3,"to":3}`); out != "func A() int { return 1 }\n" {
		t.Fatalf("line range = %q", out)
	}
	if _, err := call(t, e, EditFile(), `{"path":"src/a.go","old":"return 1","new":"return 2"}`); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Fatalf("ambiguous edit: %v", err)
	}
	if _, err := call(t, e, EditFile(), `{"path":"src/a.go","old":"return 9","new":"x"}`); err == nil {
		t.Fatal("an edit of missing text succeeded")
	}
	mustCall(t, e, EditFile(), `{"path":"src/a.go","old":"func A() int { return 1 }","new":"func A() int { return 2 }"}`)
	data, _ := e.Sandbox.ReadFile(context.Background(), "src/a.go")
	if !strings.Contains(string(data), "func A() int { return 2 }") || !strings.Contains(string(data), "func B() int { return 1 }") {
		t.Fatalf("after edit: %s", data)
	}
	if out := mustCall(t, e, ListFiles(), `{}`); out != "src/\n" {
		t.Fatalf("list = %q", out)
	}
	if _, err := call(t, e, ReadFile(), `{"path":"../../etc/passwd"}`); !errors.Is(err, sandbox.ErrEscape) {
		t.Fatalf("escape: %v", err)
	}
	if _, err := call(t, e, ReadFile(), `{"path":"src/a.go","from":40,"to":50}`); tool.KindOf(err) != session.ToolErrInvalidArgs {
		t.Fatalf("range past the end: %v", err)
	}
}

func TestSearchTools(t *testing.T) {
	e := env(t)
	for p, c := range map[string]string{"main.go": "package main\n// TODO: x\n", "pkg/a/a.go": "package a\n", "pkg/a/a_test.go": "package a\n// TODO: y\n", "README.md": "todo\n"} {
		e.Sandbox.WriteFile(context.Background(), p, []byte(c))
	}
	if out := mustCall(t, e, Glob(), `{"pattern":"**/*_test.go"}`); out != "pkg/a/a_test.go" {
		t.Fatalf("glob ** = %q", out)
	}
	if out := mustCall(t, e, Glob(), `{"pattern":"*.go"}`); out != "main.go" {
		t.Fatalf("glob * = %q", out)
	}
	if out := mustCall(t, e, Glob(), `{"pattern":"**/*.go"}`); strings.Count(out, "\n") != 2 {
		t.Fatalf("glob all go = %q", out)
	}
	out := mustCall(t, e, Grep(), `{"pattern":"TODO"}`)
	if out != "main.go:2:// TODO: x\npkg/a/a_test.go:2:// TODO: y\n" {
		t.Fatalf("grep = %q", out)
	}
	if out := mustCall(t, e, Grep(), `{"pattern":"TODO","glob":"pkg/**/*.go"}`); out != "pkg/a/a_test.go:2:// TODO: y\n" {
		t.Fatalf("grep with glob = %q", out)
	}
	if _, err := call(t, e, Grep(), `{"pattern":"("}`); tool.KindOf(err) != session.ToolErrInvalidArgs {
		t.Fatalf("bad regexp: %v", err)
	}
}

func TestCommandTools(t *testing.T) {
	e := env(t)
	out := mustCall(t, e, RunCommand(), `{"shell":"echo hi; echo oops >&2; exit 4"}`)
	if out != "exit code 4\n--- stdout\nhi\n--- stderr\noops\n" {
		t.Fatalf("run_command = %q", out)
	}
	if out := mustCall(t, e, RunCommand(), `{"args":["cat"],"stdin":"piped"}`); !strings.Contains(out, "piped") {
		t.Fatalf("stdin = %q", out)
	}
	if _, err := call(t, e, RunCommand(), `{"shell":"sleep 10","timeout_s":0.2}`); tool.KindOf(err) != session.ToolErrTimeout {
		t.Fatalf("timeout: %v", err)
	}
	if _, err := call(t, e, RunCommand(), `{}`); tool.KindOf(err) != session.ToolErrInvalidArgs {
		t.Fatalf("no command: %v", err)
	}
	if out := mustCall(t, e, RunCode(), `{"language":"sh","code":"x=$((6*7)); echo $x"}`); !strings.Contains(out, "42") {
		t.Fatalf("run_code = %q", out)
	}
	if _, err := call(t, e, RunCode(), `{"language":"cobol","code":"x"}`); tool.KindOf(err) != session.ToolErrInvalidArgs {
		t.Fatalf("unknown language: %v", err)
	}
	if _, err := RunCommand().Call(context.Background(), tool.Env{}, json.RawMessage(`{"shell":"true"}`)); !errors.Is(err, tool.ErrNoSandbox) {
		t.Fatalf("no sandbox: %v", err)
	}
}

func TestResourcesOfBuiltins(t *testing.T) {
	r := WriteFile().Resources(json.RawMessage(`{"path":"a/b.go","content":""}`))
	if len(r) != 1 || r[0] != tool.PathWrite("a/b.go") {
		t.Fatalf("write resources = %v", r)
	}
	if !tool.ConflictAny(RunCommand().Resources(nil), ReadFile().Resources(json.RawMessage(`{"path":"x"}`))) {
		t.Fatal("a command must exclude a read")
	}
	if tool.ConflictAny(ReadFile().Resources(json.RawMessage(`{"path":"x"}`)), Grep().Resources(nil)) {
		t.Fatal("reads must share")
	}
	names := map[string]bool{}
	for _, tl := range Default() {
		names[tl.Name()] = true
	}
	if len(names) != 8 {
		t.Fatalf("Default = %v", names)
	}
}
