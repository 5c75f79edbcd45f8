// Package sandboxtest is the conformance suite every sandbox backend
// passes: sandboxtest.Run(t, open) with a function that opens a fresh
// sandbox of the backend for a spec.
package sandboxtest

import (
	"context"
	"testing"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Open opens a fresh sandbox for spec; the suite closes it.
type Open func(t *testing.T, spec session.Spec) sandbox.Sandbox

// Run runs the suite.
func Run(t *testing.T, open Open) {
	cases := []struct {
		name string
		fn   func(t *testing.T, open Open)
	}{
		{"ExecOutputAndExitCodes", testExec},
		{"Stdin", testStdin},
		{"EnvironmentScrubbed", testEnv},
		{"WorkingDirectory", testDir},
		{"TimeoutKillsChildren", testTimeout},
		{"BinaryRoundTrip", testBinary},
		{"ListAndStat", testList},
		{"MissingFile", testMissing},
		{"HostilePaths", testHostile},
		{"SymlinkSwappedIn", testSwap},
		{"ConcurrentExecs", testConcurrent},
		{"UseAfterClose", testClosed},
		{"CloneIsolation", testClone},
		{"EffectsAccuracy", testEffects},
		{"StreamedOutput", testStream},
		{"OutputCapped", testCapped},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func fresh(t *testing.T, open Open, spec session.Spec) sandbox.Sandbox {
	t.Helper()
	sb := open(t, spec)
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

func run(t *testing.T, sb sandbox.Sandbox, c sandbox.Command) sandbox.Result {
	t.Helper()
	r, err := sb.Exec(ctx(t), c)
	if err != nil {
		t.Fatalf("exec %v %q: %v (stderr %q)", c.Args, c.Shell, err, r.Stderr)
	}
	return r
}

func sh(t *testing.T, sb sandbox.Sandbox, script string) sandbox.Result {
	t.Helper()
	return run(t, sb, sandbox.Command{Shell: script})
}
