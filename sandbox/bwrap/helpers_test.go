package bwrap

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// requireBwrap skips the test when bwrap cannot run here, saying what is
// missing, unless RATH_REQUIRE (a comma-separated list) names bwrap: then
// the test fails instead, so that CI skips nothing.
func requireBwrap(t testing.TB) {
	t.Helper()
	err := Backend{}.Available(context.Background())
	if err == nil {
		return
	}
	for _, name := range strings.Split(os.Getenv("RATH_REQUIRE"), ",") {
		if strings.TrimSpace(name) == Name {
			t.Fatalf("RATH_REQUIRE names bwrap, but: %v", err)
		}
	}
	t.Skipf("skipping: %v", err)
}

// tempHome points RATH_HOME at a temporary directory, so that workspaces
// go there; call it once per test, before openSandbox.
func tempHome(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("RATH_HOME", home)
	return home
}

// openSandbox opens a sandbox for spec, closed when the test ends.
func openSandbox(t testing.TB, spec session.Spec) sandbox.Sandbox {
	t.Helper()
	requireBwrap(t)
	if os.Getenv("RATH_HOME") == "" {
		t.Fatal("call tempHome first: workspaces would go to ./.rath")
	}
	sb, err := Backend{}.Open(context.Background(), spec)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// sh runs a shell script in sb and fails the test on an error (a non-zero
// exit is not one).
func sh(t testing.TB, sb sandbox.Sandbox, script string) sandbox.Result {
	t.Helper()
	res, err := sb.Exec(context.Background(), sandbox.Command{Shell: script})
	if err != nil {
		t.Fatalf("Exec %q: %v", script, err)
	}
	return res
}

// mustSh is sh for a script that must exit 0; it returns its stdout.
func mustSh(t testing.TB, sb sandbox.Sandbox, script string) string {
	t.Helper()
	res := sh(t, sb, script)
	if res.ExitCode != 0 {
		t.Fatalf("%q exited %d: %s%s", script, res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}
