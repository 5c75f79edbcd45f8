package bwrap

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

func TestRootIsReadOnly(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	for _, script := range []string{
		"echo x > /usr/rath-bwrap-test",
		"echo x > /rath-bwrap-test",
		"mkdir /etc/rath-bwrap-test",
	} {
		if res := sh(t, sb, script); res.ExitCode == 0 {
			t.Errorf("%q succeeded inside the sandbox", script)
		}
	}
	for _, p := range []string{"/usr/rath-bwrap-test", "/rath-bwrap-test", "/etc/rath-bwrap-test"} {
		if _, err := os.Lstat(p); err == nil {
			os.RemoveAll(p)
			t.Errorf("%s appeared on the host", p)
		}
	}
}

func TestNoCapabilities(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	out := mustSh(t, sb, "grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) != 2 || strings.Trim(f[1], "0") != "" {
			t.Errorf("capabilities left: %q", line)
		}
	}
	// Making a mount writable again takes CAP_SYS_ADMIN.
	if res := sh(t, sb, "mount -o remount,bind,rw /usr 2>&1 && echo x > /usr/rath-bwrap-test"); res.ExitCode == 0 {
		os.Remove("/usr/rath-bwrap-test")
		t.Fatalf("remounted /usr read-write: %s", res.Stdout)
	}
	if res := sh(t, sb, "unshare -U true"); res.ExitCode == 0 {
		t.Error("created a user namespace inside the sandbox")
	}
}

func TestKernelKnobsAreReadOnly(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{}) // no network: net.* below is the sandbox's own
	if res := sh(t, sb, "test -w /proc/sys/kernel/core_pattern"); res.ExitCode == 0 {
		t.Error("/proc/sys/kernel/core_pattern is writable inside the sandbox")
	}
	if res := sh(t, sb, "echo 1 > /proc/sys/net/ipv4/ip_forward"); res.ExitCode == 0 {
		t.Error("wrote /proc/sys inside the sandbox")
	}
}

func TestWorkspaceIsWritable(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	out := mustSh(t, sb, `echo hello > out.txt && pwd && echo "$HOME"`)
	if out != Home+"\n"+Home+"\n" {
		t.Errorf("pwd and HOME = %q, want %s twice", out, Home)
	}
	data, err := os.ReadFile(filepath.Join(sb.WorkspaceDir(), "out.txt"))
	if err != nil || string(data) != "hello\n" {
		t.Fatalf("on the host: %q, %v", data, err)
	}
}

func TestTmpAndRunArePrivate(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	hostFile, err := os.CreateTemp("", "rath-bwrap-host-")
	if err != nil {
		t.Fatal(err)
	}
	hostFile.Close()
	t.Cleanup(func() { os.Remove(hostFile.Name()) })
	if res := sh(t, sb, "test -e "+hostFile.Name()); res.ExitCode == 0 {
		t.Errorf("the host's %s is visible inside", hostFile.Name())
	}
	inside := "/tmp/rath-bwrap-inside-" + strconv.Itoa(os.Getpid())
	mustSh(t, sb, "echo x > "+inside+" && test -e "+inside)
	if _, err := os.Lstat(inside); err == nil {
		os.Remove(inside)
		t.Errorf("%s written inside appeared on the host", inside)
	}
	if out := mustSh(t, sb, "ls -A /run"); out != "" {
		t.Errorf("/run is not empty inside: %q", out)
	}
}

func TestOtherWorkspacesAreHidden(t *testing.T) {
	// The workspaces must live outside /tmp, which is private anyway.
	base := "/var/tmp"
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		t.Skip("no /var/tmp")
	}
	home, err := os.MkdirTemp(base, "rath-bwrap-home-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	t.Setenv("RATH_HOME", home)
	a := openSandbox(t, session.Spec{})
	b := openSandbox(t, session.Spec{})
	mustSh(t, b, "echo secret > mine")
	other := filepath.Join(b.WorkspaceDir(), "mine")
	if res := sh(t, a, "cat "+other); res.ExitCode == 0 {
		t.Errorf("sandbox a read b's workspace: %q", res.Stdout)
	}
	if out := mustSh(t, a, "ls -A "+filepath.Dir(b.WorkspaceDir())); out != "" {
		t.Errorf("sandbox a sees other workspaces: %q", out)
	}
}

func TestPIDNamespace(t *testing.T) {
	tempHome(t)
	sb := openSandbox(t, session.Spec{})
	out := mustSh(t, sb, `echo $$; ls /proc | grep -c '^[0-9]'`)
	f := strings.Fields(out)
	if len(f) != 2 {
		t.Fatalf("output %q", out)
	}
	if pid, _ := strconv.Atoi(f[0]); pid < 1 || pid > 5 {
		t.Errorf("the shell's pid is %s: not in a pid namespace of its own", f[0])
	}
	if n, _ := strconv.Atoi(f[1]); n > 5 {
		t.Errorf("%d processes visible in /proc", n)
	}
}

func TestEnvironmentIsScrubbed(t *testing.T) {
	tempHome(t)
	t.Setenv("RATH_BWRAP_TEST_HOST_SECRET", "hunter2")
	t.Setenv("RATH_BWRAP_TEST_PASSED", "s3cret")
	t.Setenv("RATH_BWRAP_TEST_OVERRIDDEN", "host value")
	sb := openSandbox(t, session.Spec{
		Env:       map[string]string{"FROM_SPEC": "spec"},
		SecretEnv: []string{"RATH_BWRAP_TEST_PASSED", "RATH_BWRAP_TEST_OVERRIDDEN", "RATH_BWRAP_TEST_UNSET"},
	})
	res, err := sb.Exec(t.Context(), sandbox.Command{
		Args: []string{"env"},
		Env:  map[string]string{"FROM_CMD": "cmd", "RATH_BWRAP_TEST_OVERRIDDEN": "cmd value"},
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("env: %v %d %s", err, res.ExitCode, res.Stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	want := map[string]string{
		"HOME": Home, "FROM_SPEC": "spec", "FROM_CMD": "cmd",
		"RATH_BWRAP_TEST_PASSED": "s3cret", "RATH_BWRAP_TEST_OVERRIDDEN": "cmd value",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q inside, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"RATH_BWRAP_TEST_HOST_SECRET", "RATH_BWRAP_TEST_UNSET", "RATH_HOME"} {
		if v, ok := got[k]; ok {
			t.Errorf("%s=%q leaked into the sandbox", k, v)
		}
	}
	if strings.Contains(string(res.Stdout), "hunter2") {
		t.Error("the host's secret value is visible inside")
	}
}
