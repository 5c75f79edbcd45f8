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
}
