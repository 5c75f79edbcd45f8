package engineering

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/openrath/rath/examples/internal/exsandbox"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/bwrap"
	"github.com/openrath/rath/session"
)

// testTimeout bounds one command in the sandbox: the first `go test` on a
// cold build cache compiles the standard library.
const testTimeout = 10 * time.Minute

// Backend chooses where the tests run: the backend RATH_EXAMPLE_SANDBOX
// names ("bwrap" or "local") if it is set; else "bwrap" when bubblewrap
// can make its namespaces here, else "local". why says which, and why, in
// a sentence.
func Backend(ctx context.Context) (name, why string) {
	if name := os.Getenv("RATH_EXAMPLE_SANDBOX"); name != "" {
		return name, "RATH_EXAMPLE_SANDBOX chose it"
	}
	return exsandbox.Pick(ctx)
}

// sandboxSpec is the placement's spec for backend: the Go toolchain on
// PATH and its environment (goEnv), and a timeout.
func sandboxSpec(backend, gobin, home string) (session.Spec, error) {
	env, err := goEnv(backend, gobin, home)
	if err != nil {
		return session.Spec{}, err
	}
	return session.Spec{Env: env, Timeout: testTimeout}, nil
}

// goBinary is the host's go command, as an absolute path with symlinks
// resolved.
func goBinary() (string, error) {
	gobin, err := exec.LookPath("go")
	if err == nil {
		gobin, err = filepath.EvalSymlinks(gobin)
	}
	if err == nil {
		gobin, err = filepath.Abs(gobin)
	}
	if err != nil {
		return "", fmt.Errorf("engineering: the tests run with `go test` in the sandbox, and there is no usable go command on PATH: %w", err)
	}
	return gobin, nil
}

// goEnv is the environment the sandbox's commands get to run the host's
// Go toolchain offline: its bin directory on PATH, no toolchain switch, no
// module proxy, no cgo, no cached test results, and caches that are not
// the user's.
//
// On the local backend the build cache is the home's, outside every
// workspace. Under bwrap nothing outside the workspace is writable, and
// only the workspace outlives a command, so the workspace holds a warm
// cache (.cache/go-build, filled when the repository is checked out) and
// `go` there is a wrapper (.cache/bin/go) that gives each command a
// private copy of it in /tmp: test runs leave the workspace as they found
// it, and their effects show only what they changed.
func goEnv(backend, gobin, home string) (map[string]string, error) {
	env := map[string]string{
		"PATH":        filepath.Dir(gobin) + ":" + sandbox.DefaultPath,
		"GOTOOLCHAIN": "local",
		"GOPROXY":     "off",
		"GOFLAGS":     "-count=1",
		"CGO_ENABLED": "0",
	}
	if backend == "bwrap" {
		env["PATH"] = bwrap.Home + "/" + wrapperDir + ":" + env["PATH"]
		env["GOCACHE"] = "/tmp/go-build"
		env["GOPATH"] = "/tmp/gopath"
		env["XDG_CONFIG_HOME"] = "/tmp/config" // go's telemetry counters
		return env, nil
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("engineering: home %s: %w", home, err)
	}
	env["GOCACHE"] = seedDir(abs)
	env["GOPATH"] = filepath.Join(abs, "cache", "gopath")
	env["XDG_CONFIG_HOME"] = filepath.Join(abs, "cache", "config")
	return env, nil
}
