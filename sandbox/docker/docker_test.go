package docker

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// wantUID is the uid commands run as in a sandbox whose workspace rath
// created.
func wantUID() int {
	if uid := os.Getuid(); uid != 0 {
		return uid
	}
	return SandboxUID
}

// TestSandbox checks one sandbox (one container) from several sides.
func TestSandbox(t *testing.T) {
	t.Setenv("RATH_DOCKER_TEST_SECRET", "hunter2-host-only")
	t.Setenv("RATH_DOCKER_TEST_PASSED", "passed-secret-value")
	spec := session.Spec{
		Env:         map[string]string{"FROM_SPEC": "spec-value"},
		SecretEnv:   []string{"RATH_DOCKER_TEST_PASSED"},
		MemoryBytes: 256 << 20,
		CPUs:        0.5,
		PIDs:        32,
	}
	sb := open(t, spec)
	ctx := testCtx(t)

	t.Run("OutputAndExitCode", func(t *testing.T) {
		r := shell(t, sb, "echo out; echo err >&2; exit 7")
		if string(r.Stdout) != "out\n" || string(r.Stderr) != "err\n" || r.ExitCode != 7 {
			t.Fatalf("result %+v: stdout %q, stderr %q", r, r.Stdout, r.Stderr)
		}
		r, err := sb.Exec(ctx, sandbox.Command{Args: []string{"printf", "%s|", "a b", "$HOME", "*"}})
		if err != nil || string(r.Stdout) != "a b|$HOME|*|" {
			t.Fatalf("argv is not passed as it is: %q, %v", r.Stdout, err)
		}
		r, err = sb.Exec(ctx, sandbox.Command{Args: []string{"no-such-program-rath"}})
		if err != nil || r.ExitCode != 127 {
			t.Fatalf("a missing program: exit %d, %v", r.ExitCode, err)
		}
	})

	t.Run("Stdin", func(t *testing.T) {
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, more than any pipe holds
		r, err := sb.Exec(ctx, sandbox.Command{Args: []string{"cat"}, Stdin: big})
		if err != nil || !bytes.Equal(r.Stdout, big) {
			t.Fatalf("cat returned %d bytes of %d, %v", len(r.Stdout), len(big), err)
		}
		r, err = sb.Exec(ctx, sandbox.Command{Args: []string{"cat"}})
		if err != nil || len(r.Stdout) != 0 || r.ExitCode != 0 {
			t.Fatalf("cat without stdin: %q, exit %d, %v", r.Stdout, r.ExitCode, err)
		}
	})

	t.Run("EnvironmentScrubbed", func(t *testing.T) {
		env := string(shell(t, sb, "env").Stdout)
		if strings.Contains(env, "hunter2-host-only") || strings.Contains(env, "RATH_DOCKER_TEST_SECRET") {
			t.Fatalf("a host variable reached the command:\n%s", env)
		}
		for _, want := range []string{"FROM_SPEC=spec-value", "RATH_DOCKER_TEST_PASSED=passed-secret-value", "HOME=/workspace"} {
			if !strings.Contains(env, want) {
				t.Fatalf("env lacks %s:\n%s", want, env)
			}
		}
		// The secret is passed per command, never stored with the container.
		ins := inspect(t, sb)
		if env := strings.Join(ins.Container.Config.Env, "\n"); strings.Contains(env, "passed-secret-value") || strings.Contains(env, "FROM_SPEC") {
			t.Fatalf("the container's configuration holds the spec's env:\n%s", env)
		}
	})

	t.Run("NoNetwork", func(t *testing.T) {
		var ifaces []string
		for _, line := range strings.Split(out(shell(t, sb, "cat /proc/net/dev")), "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok {
				ifaces = append(ifaces, strings.TrimSpace(name))
			}
		}
		if !slices.Equal(ifaces, []string{"lo"}) {
			t.Fatalf("interfaces %v, want only lo", ifaces)
		}
		ip := hostIP()
		if ip == "" {
			return
		}
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		r := shell(t, sb, "wget -q -T 3 -O - http://"+ip+":"+port+"/ 2>&1; echo exit=$?")
		if strings.HasSuffix(out(r), "exit=0") {
			t.Fatalf("reached the host at %s:%s: %q", ip, port, r.Stdout)
		}
	})

	t.Run("Unprivileged", func(t *testing.T) {
		if got := out(shell(t, sb, "id -u")); got != strconv.Itoa(wantUID()) {
			t.Fatalf("id -u = %s, want %d", got, wantUID())
		}
		status := string(shell(t, sb, "cat /proc/self/status").Stdout)
		for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1"} {
			if !strings.Contains(status, want) {
				t.Fatalf("/proc/self/status lacks %q:\n%s", want, status)
			}
		}
		// A command cannot stop the container: its init and idle loop
		// belong to another user.
		shell(t, sb, "kill -s TERM 1; kill -s KILL -1; true")
		if r := shell(t, sb, "echo still here"); out(r) != "still here" {
			t.Fatalf("after kill -1: %q %q", r.Stdout, r.Stderr)
		}
	})

	t.Run("ReadOnlyRoot", func(t *testing.T) {
		if r := shell(t, sb, "touch /etc/rath-was-here"); r.ExitCode == 0 {
			t.Fatal("wrote to /etc")
		}
		if r := shell(t, sb, "echo x > /tmp/scratch && cat /tmp/scratch"); out(r) != "x" {
			t.Fatalf("/tmp is not writable: %q %q", r.Stdout, r.Stderr)
		}
	})

	t.Run("WorkspaceBothWays", func(t *testing.T) {
		if err := sb.WriteFile(ctx, "host/dir/a.txt", []byte("from host\n")); err != nil {
			t.Fatal(err)
		}
		if err := sb.Mkdir(ctx, "made/here"); err != nil {
			t.Fatal(err)
		}
		// What rath wrote, the command can read and change.
		r := shell(t, sb, "cat host/dir/a.txt && echo more >> host/dir/a.txt && touch host/dir/new made/here/c && echo ok")
		if out(r) != "from host\nok" {
			t.Fatalf("inside: %q %q", r.Stdout, r.Stderr)
		}
		if b, err := sb.ReadFile(ctx, "host/dir/a.txt"); err != nil || string(b) != "from host\nmore\n" {
			t.Fatalf("host side after the command: %q, %v", b, err)
		}
		// What the command wrote, rath reads; it belongs to the command's user.
		shell(t, sb, "mkdir -p in && echo from container > in/b.txt")
		if b, err := sb.ReadFile(ctx, "in/b.txt"); err != nil || string(b) != "from container\n" {
			t.Fatalf("host side: %q, %v", b, err)
		}
		st, err := os.Stat(filepath.Join(sb.WorkspaceDir(), "in", "b.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != wantUID() {
			t.Fatalf("in/b.txt belongs to uid %d, want %d", uid, wantUID())
		}
	})

	t.Run("WorkingDirectoryConfined", func(t *testing.T) {
		if err := os.Symlink("/etc", filepath.Join(sb.WorkspaceDir(), "out")); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Exec(ctx, sandbox.Command{Args: []string{"pwd"}, Dir: "out"}); !errors.Is(err, sandbox.ErrEscape) {
			t.Fatalf("Dir through a symlink out: %v", err)
		}
		if err := sb.Mkdir(ctx, "sub"); err != nil {
			t.Fatal(err)
		}
		if r, err := sb.Exec(ctx, sandbox.Command{Args: []string{"pwd"}, Dir: "sub"}); err != nil || out(r) != "/workspace/sub" {
			t.Fatalf("pwd in sub: %q, %v", r.Stdout, err)
		}
	})

	t.Run("Limits", func(t *testing.T) {
		ins := inspect(t, sb)
		hc, cfg := ins.Container.HostConfig, ins.Container.Config
		if hc.Memory != 256<<20 || hc.MemorySwap != 256<<20 || hc.NanoCPUs != 5e8 || hc.PidsLimit == nil || *hc.PidsLimit != 32 {
			t.Fatalf("limits: memory %d swap %d cpus %d pids %v", hc.Memory, hc.MemorySwap, hc.NanoCPUs, hc.PidsLimit)
		}
		if !hc.ReadonlyRootfs || !slices.Contains(hc.CapDrop, "ALL") || !slices.Contains(hc.SecurityOpt, "no-new-privileges") || hc.NetworkMode != "none" {
			t.Fatalf("confinement: %+v", hc)
		}
		if cfg.Labels[LabelSandbox] != sb.ID() || cfg.Labels[LabelOwner] != strconv.Itoa(os.Getpid()) || cfg.Labels[LabelUser] != sb.user.String() {
			t.Fatalf("labels %v", cfg.Labels)
		}
		// The process limit holds: forking stops well short of 100.
		r, _ := sb.Exec(ctx, sandbox.Command{
			Shell:   `for i in $(seq 100); do (sleep 30 &) 2>/dev/null || { echo limited; break; }; done`,
			Timeout: 5 * time.Second,
		})
		if !strings.Contains(string(r.Stdout), "limited") {
			t.Fatalf("100 processes started under a limit of 32: %q", r.Stdout)
		}
	})

	t.Run("TimeoutKillsTheGroup", func(t *testing.T) {
		// Cleaning /tmp does not stop the kill.
		r, err := sb.Exec(ctx, sandbox.Command{Shell: "rm -rf /tmp/* /tmp/.??*; echo started; sleep 30 & echo $! > child.pid; sleep 30", Timeout: 500 * time.Millisecond})
		if !errors.Is(err, sandbox.ErrTimeout) || !r.TimedOut || out(r) != "started" {
			t.Fatalf("err %v, result %+v, stdout %q", err, r, r.Stdout)
		}
		assertGone(t, sb, "child.pid")
	})

	t.Run("CancelKillsTheGroup", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		w := &cancelOn{s: "started", cancel: cancel}
		_, err := sb.Exec(cctx, sandbox.Command{Shell: "sleep 30 & echo $! > child2.pid; echo started; sleep 30", Stdout: w})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		assertGone(t, sb, "child2.pid")
	})

	t.Run("BackgroundChildHoldingOutput", func(t *testing.T) {
		// The command exits at once; its child keeps stdout open for
		// longer than this context lasts, unless Exec stops waiting.
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		r, err := sb.Exec(cctx, sandbox.Command{Shell: "sleep 600 & echo $! > child3.pid; echo done"})
		if err != nil || out(r) != "done" || r.ExitCode != 0 {
			t.Fatalf("%q, exit %d, %v", r.Stdout, r.ExitCode, err)
		}
		assertGone(t, sb, "child3.pid")
	})

	t.Run("CloneKeepsSpecAndUser", func(t *testing.T) {
		cl, err := sb.Clone(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		c := cl.(*Sandbox)
		if hc := inspect(t, c).Container.HostConfig; hc.Memory != 256<<20 || *hc.PidsLimit != 32 {
			t.Fatalf("clone limits: memory %d pids %v", hc.Memory, *hc.PidsLimit)
		}
		r := shell(t, c, "echo clone >> host/dir/a.txt && cat host/dir/a.txt")
		if out(r) != "from host\nmore\nclone" {
			t.Fatalf("in the clone: %q %q", r.Stdout, r.Stderr)
		}
		if b, _ := sb.ReadFile(ctx, "host/dir/a.txt"); string(b) != "from host\nmore\n" {
			t.Fatalf("the clone's write reached the original: %q", b)
		}
	})
}

// assertGone fails unless the process whose pid is in the workspace file
// is dead (a zombie not yet reaped counts as dead).
func assertGone(t *testing.T, sb sandbox.Sandbox, pidFile string) {
	t.Helper()
	r := shell(t, sb, `p=$(cat `+pidFile+`); s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); if [ -n "$s" ] && [ "$s" != Z ]; then echo alive; else echo gone; fi`)
	if out(r) != "gone" {
		t.Fatalf("the killed command's child survived: %q %q", r.Stdout, r.Stderr)
	}
}

// cancelOn cancels when it has seen s.
type cancelOn struct {
	buf    bytes.Buffer
	s      string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.s) {
		c.cancel()
	}
	return len(p), nil
}

func inspect(t *testing.T, sb *Sandbox) client.ContainerInspectResult {
	t.Helper()
	ins, err := sb.cli.ContainerInspect(testCtx(t), sb.cid, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ins
}

// hostIP is a non-loopback IPv4 address of this host, or "".
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}
