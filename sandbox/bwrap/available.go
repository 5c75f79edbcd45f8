package bwrap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/internal/proc"
)

// probeTimeout bounds the one trial run of bwrap.
const probeTimeout = 30 * time.Second

// probe remembers whether bwrap works here, once it has been found out.
var probe struct {
	mu   sync.Mutex
	done bool
	path string // the bwrap binary
	err  error
}

// available returns the path of a bwrap that can create the sandbox's
// namespaces here, or an error wrapping sandbox.ErrUnavailable. The first
// call runs bwrap once, as Exec would, and the answer is kept; a probe cut
// short by ctx is not kept.
func available(ctx context.Context) (string, error) {
	probe.mu.Lock()
	defer probe.mu.Unlock()
	if probe.done {
		return probe.path, probe.err
	}
	path, err := findBwrap()
	if err == nil {
		err = tryBwrap(ctx, path)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return "", ctxErr
	}
	probe.done, probe.path, probe.err = true, path, err
	return path, err
}

// findBwrap looks for bwrap in the host's PATH, then in the default one.
func findBwrap() (string, error) {
	if p, err := exec.LookPath("bwrap"); err == nil {
		return filepath.Abs(p)
	}
	for _, dir := range filepath.SplitList(sandbox.DefaultPath) {
		p := filepath.Join(dir, "bwrap")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: bwrap not installed: apt-get install -y bubblewrap", sandbox.ErrUnavailable)
}

// tryBwrap runs `true` in a sandbox laid out as Exec lays it out.
func tryBwrap(ctx context.Context, path string) error {
	ws, err := os.MkdirTemp("", "rath-bwrap-probe-")
	if err != nil {
		return fmt.Errorf("bwrap: probe: %w", err)
	}
	defer os.RemoveAll(ws)
	inv := invocation{bwrap: path, root: "/", workspace: ws, dir: ".", cmd: sandbox.Command{Args: []string{"true"}}}
	argv, env, err := inv.build()
	if err != nil {
		return fmt.Errorf("bwrap: probe: %w", err)
	}
	res, err := proc.Run(ctx, argv, "/", env, sandbox.Command{}, probeTimeout)
	if err == nil && res.ExitCode != 0 {
		msg := strings.TrimSpace(string(res.Stderr))
		if msg == "" {
			msg = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		err = errors.New(msg)
	}
	if err != nil {
		return fmt.Errorf("%w: %s cannot create the sandbox's namespaces here: %w", sandbox.ErrUnavailable, path, err)
	}
	return nil
}
