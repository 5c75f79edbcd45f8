package bwrap

import (
	"slices"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/egress"
	"github.com/openrath/rath/session"
)

func TestSecretsStayOffTheCommandLine(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	t.Setenv("RATH_BWRAP_TEST_TOKEN", "tok-123")
	inv := invocation{
		bwrap: "/usr/bin/bwrap", root: "/", workspace: t.TempDir(), dir: ".",
		spec: session.Spec{SecretEnv: []string{"RATH_BWRAP_TEST_TOKEN"}, Env: map[string]string{"FROM_SPEC": "x"}},
		cmd:  sandbox.Command{Args: []string{"env"}, Env: map[string]string{"LD_PRELOAD": "/workspace/evil.so"}},
	}
	argv, env, err := inv.build()
	if err != nil {
		t.Fatal(err)
	}
	if joined := strings.Join(argv, "\x00"); strings.Contains(joined, "tok-123") {
		t.Errorf("the secret is on bwrap's command line: %q", argv)
	}
	if want := []string{"RATH_BWRAP_TEST_TOKEN=tok-123"}; !slices.Equal(env, want) {
		t.Errorf("bwrap's environment %q, want %q", env, want)
	}
	joined := strings.Join(argv, "\x00")
	for _, kv := range []string{"LD_PRELOAD\x00/workspace/evil.so", "FROM_SPEC\x00x", "HOME\x00" + Home} {
		if !strings.Contains(joined, "--setenv\x00"+kv+"\x00") {
			t.Errorf("no --setenv %q in %q", kv, argv)
		}
	}
}

func TestBwrapEnvironmentIsEmptyNotNil(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	inv := invocation{bwrap: "bwrap", root: "/", workspace: t.TempDir(), dir: ".", cmd: sandbox.Command{Args: []string{"true"}}}
	_, env, err := inv.build()
	if err != nil {
		t.Fatal(err)
	}
	// A nil environment would make exec pass on the host's whole one.
	if env == nil || len(env) != 0 {
		t.Errorf("bwrap's environment %q, want empty and not nil", env)
	}
}

func TestCommandGoesThroughThePrelude(t *testing.T) {
	t.Setenv("RATH_HOME", t.TempDir())
	inv := invocation{
		bwrap: "bwrap", root: "/", workspace: "/ws", dir: "a/b",
		spec: session.Spec{MemoryBytes: 1 << 30, PIDs: 64, Network: true},
		cmd:  sandbox.Command{Args: []string{"--not-an-option", "x"}},
		gate: &gate{dir: "/egress", exe: "/rath"},
	}
	argv, _, err := inv.build()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(argv, "--")
	bridge := []string{bridgePath, egress.BridgeArg, egressDir + "/" + socketName, "--"}
	if i < 0 || !slices.Equal(argv[i+1:i+5], bridge) {
		t.Fatalf("command part %q does not start with the egress bridge", argv[max(i, 0):])
	}
	i += 4
	if !slices.Equal(argv[i+1:i+3], []string{"/bin/sh", "-c"}) || !slices.Equal(argv[i+4:], []string{"sh", "--not-an-option", "x"}) {
		t.Fatalf("command part %q", argv[max(i, 0):])
	}
	script := argv[i+3]
	for _, want := range []string{"ulimit -v 1048576", "ulimit -u 64", "ulimit -p 64", `exec "$@"`} {
		if !strings.Contains(script, want) {
			t.Errorf("prelude %q lacks %q", script, want)
		}
	}
	joined := strings.Join(argv[:i], " ")
	if strings.Contains(joined, "--share-net") {
		t.Errorf("the network is shared: %q", joined)
	}
	for _, want := range []string{"--unshare-all", "--ro-bind /egress " + egressDir, "--ro-bind /rath " + bridgePath, "--chdir /workspace/a/b", "--bind /ws /workspace", "--cap-drop ALL", "--tmpfs /tmp"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q in %q", want, joined)
		}
	}
}
