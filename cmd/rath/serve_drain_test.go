package main

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openrath/rath/internal/syncbuf"
)

// TestServeWorkerDrainsOnSIGTERM: `rath serve --worker` stops on SIGTERM
// as a supervisor expects: its worker drains, and it exits 0.
func TestServeWorkerDrainsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rath and starts a process")
	}
	c := newCLI(t, rathBinary(t), "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := c.command("serve", "--worker", "--addr", addr)
	var errb lockedBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(errb.String(), "worker started"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker never started:\n%s", errb.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitOf(t, cmd); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0:\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "worker draining") || !strings.Contains(errb.String(), "worker stopped") {
		t.Fatalf("the worker did not drain:\n%s", errb.String())
	}
}

// lockedBuffer is a buffer a process writes to while the test reads it.
type lockedBuffer = syncbuf.Buffer
