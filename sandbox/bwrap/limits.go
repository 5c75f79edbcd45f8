package bwrap

import (
	"fmt"
	"strings"

	"github.com/openrath/rath/session"
)

// prelude is the /bin/sh script every command starts through: it sets the
// spec's rlimits, hard and soft, then execs the command ("$@"), so that a
// program that is not found exits 127 as it would on the host. A limit
// that cannot be set stops the command with exit status 126.
//
// Spec.MemoryBytes becomes RLIMIT_AS (ulimit -v, in KiB) and Spec.PIDs
// RLIMIT_NPROC, which bash and busybox spell ulimit -u and dash ulimit -p.
// Spec.CPUs has no rlimit and is ignored.
func prelude(spec session.Spec) string {
	var b strings.Builder
	if spec.MemoryBytes > 0 {
		kib := max(spec.MemoryBytes/1024, 1)
		fmt.Fprintf(&b, "ulimit -v %d 2>/dev/null || { echo 'rath sandbox: cannot limit memory to %d bytes' >&2; exit 126; }; ",
			kib, spec.MemoryBytes)
	}
	if spec.PIDs > 0 {
		fmt.Fprintf(&b, "{ ulimit -u %d || ulimit -p %d; } 2>/dev/null || { echo 'rath sandbox: cannot limit processes to %d' >&2; exit 126; }; ",
			spec.PIDs, spec.PIDs, spec.PIDs)
	}
	b.WriteString(`exec "$@"`)
	return b.String()
}
