package bwrap

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/openrath/rath/session"
)

// interfaces lists the network interfaces the sandbox sees.
func interfaces(t *testing.T, out string) []string {
	t.Helper()
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

func TestNetwork(t *testing.T) {
	tempHome(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	_, bashErr := exec.LookPath("bash")
	connect := fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' 2>/dev/null`, port)

	t.Run("off", func(t *testing.T) {
		sb := openSandbox(t, session.Spec{})
		if names := interfaces(t, mustSh(t, sb, "cat /proc/net/dev")); len(names) != 1 || names[0] != "lo" {
			t.Errorf("interfaces %v, want only lo", names)
		}
		if bashErr != nil {
			t.Skip("no bash to try a connection with")
		}
		if res := sh(t, sb, connect); res.ExitCode == 0 {
			t.Error("reached the host's 127.0.0.1 without the network")
		}
	})
	// With the network on, the sandbox still has only its loopback: its
	// way out is the egress proxy (egress_test.go), not the host's
	// network.
	t.Run("on", func(t *testing.T) {
		sb := openSandbox(t, session.Spec{Network: true})
		if names := interfaces(t, mustSh(t, sb, "cat /proc/net/dev")); len(names) != 1 || names[0] != "lo" {
			t.Errorf("interfaces %v, want only lo", names)
		}
		if bashErr != nil {
			t.Skip("no bash to try a connection with")
		}
		if res := sh(t, sb, connect); res.ExitCode == 0 {
			t.Error("reached the host's 127.0.0.1 directly, not through the egress proxy")
		}
	})
}
