package e2b_test

import (
	"testing"

	"github.com/openrath/rath/sandbox/e2b/e2bfake"
	"github.com/openrath/rath/sandbox/remote/remotebench"
	"github.com/openrath/rath/session"
)

// BenchmarkRemoteExec measures what the client adds to the fake's own work
// per Exec (target: under 1 ms) and the MB/s of a 10 MiB WriteFile and
// ReadFile; see package remotebench.
func BenchmarkRemoteExec(b *testing.B) {
	for _, c := range []struct {
		name string
		fo   e2bfake.Options
	}{
		{"backend=e2b", e2bfake.Options{}},
		{"backend=cube", e2bfake.Options{Cube: true, Domain: "cube.test"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv, be := startFake(b, c.fo)
			sb := open(b, be, session.Spec{})
			b.Cleanup(func() { _ = sb.Close() })
			remotebench.Run(b, srv, sb)
		})
	}
}
