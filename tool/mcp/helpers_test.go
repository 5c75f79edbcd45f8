package mcp

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// patience bounds every wait in these tests: a hang fails instead of
// blocking, and no test depends on anything being fast.
const patience = 60 * time.Second

// waitFor waits until cond holds, failing the test after patience.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// listening waits until something accepts connections at addr.
func listening(t testing.TB, addr string) {
	t.Helper()
	waitFor(t, "a server at "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// startServer starts cmd, stopping it when the test ends, and waits until
// it listens at addr.
func startServer(t testing.TB, cmd *exec.Cmd, addr string) *exec.Cmd {
	t.Helper()
	out := &tail{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("output of %v (its end): %s", cmd.Args, out.String())
		}
	})
	listening(t, addr)
	return cmd
}

// kill kills a server started by startServer and waits until its port is
// free.
func kill(t testing.TB, cmd *exec.Cmd, addr string) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server at "+addr+" to go", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
}

// goHTTPServer starts the test binary as a streamable-HTTP server at addr.
func goHTTPServer(t testing.TB, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serverEnv+"=http", addrEnv+"="+addr, "GORACE=atexit_sleep_ms=0")
	return startServer(t, cmd, addr)
}

// goneSoon waits until the client has found its session gone.
func goneSoon(t testing.TB, c *Client) {
	t.Helper()
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn == nil {
		t.Fatal("no session")
	}
	select {
	case <-cn.life.Done():
	case <-time.After(patience):
		t.Fatal("the client did not notice that the server is gone")
	}
}

// testCtx is a context that ends with the test's patience.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}
