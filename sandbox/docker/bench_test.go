package docker

import (
	"context"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// BenchmarkExec is the round trip of running `true` in a running container.
func BenchmarkExec(b *testing.B) {
	b.Run("backend=docker", func(b *testing.B) {
		sb := open(b, session.Spec{})
		for b.Loop() {
			if r, err := sb.Exec(context.Background(), sandbox.Command{Args: []string{"true"}}); err != nil || r.ExitCode != 0 {
				b.Fatal(r, err)
			}
		}
	})
	// With the network on, each command also gets an egress proxy in the
	// container's network namespace (an inspect, a setns, a listener).
	b.Run("backend=docker/network", func(b *testing.B) {
		sb := open(b, session.Spec{Network: true})
		for b.Loop() {
			if r, err := sb.Exec(context.Background(), sandbox.Command{Args: []string{"true"}}); err != nil || r.ExitCode != 0 {
				b.Fatal(r, err)
			}
		}
	})
}
