package opensandbox_test

import (
	"testing"

	"github.com/openrath/rath/sandbox/opensandbox/osfake"
	"github.com/openrath/rath/sandbox/remote/remotebench"
	"github.com/openrath/rath/session"
)

// BenchmarkRemoteExec measures what the client adds to the fake's own work
// per Exec (target: under 1 ms) and the MB/s of a 10 MiB WriteFile and
// ReadFile; see package remotebench.
func BenchmarkRemoteExec(b *testing.B) {
	b.Run("backend=opensandbox", func(b *testing.B) {
		srv, be := startFake(b, osfake.Options{})
		sb := open(b, be, session.Spec{})
		b.Cleanup(func() { _ = sb.Close() })
		remotebench.Run(b, srv, sb)
	})
}
