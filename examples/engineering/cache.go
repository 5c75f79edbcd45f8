package engineering

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/bwrap"
)

// Where a bwrap workspace keeps its warm Go build cache and the go
// wrapper.
const (
	cacheDir   = ".cache/go-build"
	wrapperDir = ".cache/bin"
)

// wrapper is the go command of a bwrap sandbox: the real one (%[1]s),
// with GOCACHE=/tmp/go-build seeded from the workspace's warm cache.
const wrapper = `#!/bin/sh
# The Go toolchain (%[1]s) with a throwaway copy of the workspace's warm
# build cache in this sandbox's private /tmp, so that builds and test runs
# leave the workspace as they found it.
if [ "$GOCACHE" = /tmp/go-build ] && [ ! -d /tmp/go-build ]; then
	cp -R %[2]s/%[3]s /tmp/go-build 2>/dev/null || mkdir -p /tmp/go-build
fi
exec "%[1]s" "$@"
`

// seedDir is the home's Go build cache: the local backend's, and what
// bwrap workspaces are seeded from.
func seedDir(home string) string { return filepath.Join(home, "cache", "go-build") }

// Cold reports whether home has no Go build cache yet: a run will first
// compile the standard library in the sandbox, which takes about a minute.
func Cold(home string) bool {
	_, err := os.Stat(seedDir(home))
	return err != nil
}

// prepareCache seeds a bwrap workspace's build cache from the home's and
// installs the go wrapper (see goEnv).
func (c *Checkout) prepareCache(ctx context.Context, ws string) error {
	if err := seed(ctx, seedDir(c.home), filepath.Join(ws, cacheDir)); err != nil {
		return err
	}
	dir := filepath.Join(ws, filepath.FromSlash(wrapperDir))
	script := fmt.Sprintf(wrapper, c.gobin, bwrap.Home, cacheDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("engineering: go wrapper: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		return fmt.Errorf("engineering: go wrapper: %w", err)
	}
	return nil
}

// warm runs `go version` and `go test -run '^$' ./...` in the sandbox: the
// toolchain must work there, and the second fills the build cache (under
// bwrap, the workspace's), so that the agents' test runs compile only what
// they changed. It returns the toolchain's version.
func warm(ctx context.Context, sb sandbox.Sandbox, bwrapped bool) (string, error) {
	var env map[string]string
	if bwrapped {
		env = map[string]string{"GOCACHE": bwrap.Home + "/" + cacheDir}
	}
	var version string
	for _, args := range [][]string{{"go", "version"}, {"go", "test", "-run", "^$", "./..."}} {
		r, err := sb.Exec(ctx, sandbox.Command{Args: args, Env: env})
		if err == nil && r.ExitCode != 0 {
			err = fmt.Errorf("exit code %d: %s", r.ExitCode, strings.TrimSpace(string(r.Stdout)+string(r.Stderr)))
		}
		if err != nil {
			return "", fmt.Errorf("engineering: the %s sandbox cannot run %q: %w", sb.Backend(), strings.Join(args, " "), err)
		}
		if version == "" {
			// "go version go1.26.1 linux/amd64"
			if f := strings.Fields(string(r.Stdout)); len(f) >= 3 {
				version = "Go " + strings.TrimPrefix(f[2], "go")
			} else {
				version = "Go"
			}
		}
	}
	return version, nil
}

// seed copies the home's Go build cache into a workspace's, if the home
// has one.
func seed(ctx context.Context, from, to string) error {
	if _, err := os.Stat(from); os.IsNotExist(err) {
		return nil
	}
	if err := sandbox.CopyTree(ctx, from, to); err != nil {
		return fmt.Errorf("engineering: seed the Go build cache: %w", err)
	}
	return nil
}

// keep adds to the home's Go build cache the entries a workspace's cache
// has and it lacks. The cache's files are named by content, so an entry
// present in both is the same; each is written beside its name and
// renamed into place, so a concurrent run never sees half of one.
func keep(ctx context.Context, from, to string) error {
	if _, err := os.Stat(from); os.IsNotExist(err) {
		return nil
	}
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".keep-*")
		if err != nil {
			return err
		}
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dst)
		}
		if err != nil {
			os.Remove(tmp.Name())
		}
		return err
	})
}
