package docker

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// listenIn listens on 127.0.0.1 (a free port) in the network namespace of
// process pid: the socket is made on a thread that has entered the
// namespace and then returns to its own, so the listener lives in the
// container while the proxy serving it, and its dials, stay on the host.
// It needs the right to enter the namespace (root, or CAP_SYS_ADMIN over
// it) and the container on this host.
func listenIn(pid int) (net.Listener, error) {
	target, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, fmt.Errorf("docker: the container's network namespace: %w", err)
	}
	defer target.Close()
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// A thread that cannot be put back in its own namespace stays
		// locked: the runtime discards it when this goroutine ends.
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("docker: this thread's network namespace: %w", err)}
			return
		}
		defer own.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("docker: entering the container's network namespace: %w", err)}
			return
		}
		ln, lerr := net.Listen("tcp", "127.0.0.1:0")
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err == nil {
			runtime.UnlockOSThread()
		}
		done <- result{ln, lerr}
	}()
	r := <-done
	return r.ln, r.err
}
