package attack

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/internal/syncbuf"
)

// buildRath builds the rath binary into dir, without the race detector.
func buildRath(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "rath")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/openrath/rath/cmd/rath").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// env is the environment of every rath process of the suite: the
// caller's without RATH_* variables and model keys (the examples run
// offline), with the suite's home and audit witness.
func env(home string) []string {
	var e []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATH_") && !strings.Contains(strings.SplitN(kv, "=", 2)[0], "API_KEY") {
			e = append(e, kv)
		}
	}
	return append(e, "RATH_HOME="+home, "RATH_AUDIT_WITNESS="+witness(home))
}

// cli runs `rath args...` on the suite's home and returns its stdout,
// stderr and exit code.
func (a *attack) cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.bin, args...)
	cmd.Env = env(a.home)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil {
		if x, ok := err.(*exec.ExitError); ok {
			return o.String(), e.String(), x.ExitCode()
		}
		t.Fatalf("rath %v: %v", args, err)
	}
	return o.String(), e.String(), 0
}

// mustCLI runs `rath args...` and fails unless it exits 0.
func (a *attack) mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := a.cli(t, args...)
	if code != 0 {
		t.Fatalf("rath %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

// syncBuffer is a process's log, written by it and read by the probes.
type syncBuffer = syncbuf.Buffer

// server is one `rath serve` process.
type server struct {
	cmd  *exec.Cmd
	url  string
	log  *syncBuffer
	done chan error
}

// freeAddr is a loopback address no one listens on, just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serve starts `rath serve args...` on a free loopback port and waits
// until it answers /health/live.
func (a *attack) serve(t *testing.T, args ...string) *server {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(a.bin, append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Env = env(a.home)
	s := &server{cmd: cmd, url: "http://" + addr, log: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.logs = append(a.logs, s.log)
	go func() { s.done <- cmd.Wait() }()
	for deadline := time.Now().Add(60 * time.Second); ; {
		select {
		case err := <-s.done:
			t.Fatalf("rath serve exited: %v\n%s", err, s.log)
		default:
		}
		res, err := http.Get(s.url + "/health/live")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			s.kill()
			t.Fatalf("rath serve did not come up on %s: %v\n%s", addr, err, s.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the server with SIGTERM, as an operator would, so that it
// flushes what it holds (the audit log's counts), and kills it if it
// does not end.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("rath serve ended with %v\n%s", err, s.log)
		}
	case <-time.After(30 * time.Second):
		s.kill()
		t.Errorf("rath serve did not stop on SIGTERM\n%s", s.log)
	}
	s.cmd.Process = nil
}

// kill ends the server at once (a test that failed).
func (s *server) kill() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
		s.cmd.Process = nil
	}
}

func (s *server) String() string { return fmt.Sprintf("rath serve %s", s.url) }
