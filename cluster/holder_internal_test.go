package cluster

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A displaced holder may exist while its process on this host exists,
// running or stopped; it is gone once its process is; on another host its
// database session (its advisory lock) tells.
func TestHolderExists(t *testing.T) {
	ctx := context.Background()
	c := &Cluster{host: "here"}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	pid := sleeper.Process.Pid
	defer sleeper.Process.Kill()

	if ok, why := c.holderExists(ctx, Holder{Host: "here", PID: pid}, nil); !ok || !strings.Contains(why, "still runs") {
		t.Fatalf("running: %v %q", ok, why)
	}
	_ = sleeper.Process.Signal(syscall.SIGSTOP)
	deadline := time.Now().Add(5 * time.Second)
	for procState(pid) != procStopped && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ok, why := c.holderExists(ctx, Holder{Host: "here", PID: pid}, nil); !ok || !strings.Contains(why, "stopped") {
		t.Fatalf("stopped: %v %q", ok, why)
	}
	_ = sleeper.Process.Kill()
	_ = sleeper.Wait()
	if ok, why := c.holderExists(ctx, Holder{Host: "here", PID: pid}, nil); ok || !strings.Contains(why, "gone") {
		t.Fatalf("killed: %v %q", ok, why)
	}

	// Elsewhere: the lock it holds while it lives.
	held := map[int64]bool{7: true}
	if ok, why := c.holderExists(ctx, Holder{Host: "there", PID: os.Getpid(), Lock: 7}, held); !ok || !strings.Contains(why, "holds its lock") {
		t.Fatalf("lock held: %v %q", ok, why)
	}
	if ok, why := c.holderExists(ctx, Holder{Host: "there", PID: os.Getpid(), Lock: 8}, held); ok || !strings.Contains(why, "session ended") {
		t.Fatalf("lock gone: %v %q", ok, why)
	}
}
