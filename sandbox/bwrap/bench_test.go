package bwrap

import (
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// BenchmarkExec is the round trip of running `true`.
func BenchmarkExec(b *testing.B) {
	b.Run("backend="+Name, func(b *testing.B) {
		tempHome(b)
		sb := openSandbox(b, session.Spec{})
		c := sandbox.Command{Args: []string{"true"}}
		for b.Loop() {
			res, err := sb.Exec(b.Context(), c)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("true: %v, exit %d: %s", err, res.ExitCode, res.Stderr)
			}
		}
	})
	// With the network on, each command also gets its egress proxy and
	// starts under the bridge (this binary re-executed).
	b.Run("backend="+Name+"/network", func(b *testing.B) {
		tempHome(b)
		sb := openSandbox(b, session.Spec{Network: true})
		c := sandbox.Command{Args: []string{"true"}}
		for b.Loop() {
			res, err := sb.Exec(b.Context(), c)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("true: %v, exit %d: %s", err, res.ExitCode, res.Stderr)
			}
		}
	})
}
