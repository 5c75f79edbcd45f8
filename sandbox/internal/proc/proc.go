// Package proc runs a sandbox.Command as a host process, for the backends
// that run commands on the host or through a host binary: the argv and
// environment a command gets, its timeout, and output kept to a cap while
// it streams.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Env is the environment a command gets: PATH, HOME=home, LANG, the spec's
// Env, the spec's SecretEnv names with their values from the host, then
// the command's Env. Nothing else of the host's environment is passed.
func Env(spec session.Spec, home string, c sandbox.Command) []string {
	env := map[string]string{"PATH": sandbox.DefaultPath, "HOME": home, "LANG": "C.UTF-8"}
	for k, v := range spec.Env {
		env[k] = v
	}
	for _, k := range spec.SecretEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range c.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Argv returns the command's argv: Args, or sh -c Shell.
func Argv(c sandbox.Command) ([]string, error) {
	switch {
	case len(c.Args) > 0 && c.Shell != "":
		return nil, fmt.Errorf("sandbox: a command has Args or Shell, not both")
	case len(c.Args) > 0:
		return c.Args, nil
	case c.Shell != "":
		return []string{"sh", "-c", c.Shell}, nil
	}
	return nil, fmt.Errorf("sandbox: empty command")
}

// Timeout is the command's timeout, else the spec's.
func Timeout(c sandbox.Command, spec session.Spec) time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return spec.Timeout
}

// Run runs argv on the host in its own process group, with env and
// working directory dir; stdin, output capture and streaming from c. When
// the timeout passes or ctx ends, the whole group is killed: a timeout
// returns sandbox.ErrTimeout with the output so far, a cancelled ctx its error.
func Run(ctx context.Context, argv []string, dir string, env []string, c sandbox.Command, timeout time.Duration) (sandbox.Result, error) {
	start := time.Now()
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	if p, err := lookPath(argv[0], env); err == nil {
		cmd.Path, cmd.Err = p, nil
	} else {
		cmd.Err = err
	}
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var stdout, stderr Capped
	cmd.Stdout, cmd.Stderr = Tee(&stdout, c.Stdout), Tee(&stderr, c.Stderr)
	err := cmd.Run()
	// Whatever happened, leave nothing of the group running.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := sandbox.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Dropped: stdout.Dropped() + stderr.Dropped(), Duration: time.Since(start), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case timeout > 0 && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		res.TimedOut = true
		return res, fmt.Errorf("%w after %s: %s", sandbox.ErrTimeout, timeout, argv[0])
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			res.ExitCode = 127
			res.Stderr = append(res.Stderr, fmt.Sprintf("%s: command not found\n", argv[0])...)
			return res, nil
		}
		if errors.Is(err, exec.ErrWaitDelay) {
			return res, nil // the command exited; a child kept its output open and was killed
		}
		return res, fmt.Errorf("sandbox: run %s: %w", argv[0], err)
	}
	return res, nil
}

// lookPath finds a program in the command's PATH, not the host's.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathList := sandbox.DefaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v
		}
	}
	for _, dir := range filepath.SplitList(pathList) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Tee writes to buf and, if w is set, to w too: a command's captured and
// streamed output.
func Tee(buf io.Writer, w io.Writer) io.Writer {
	if w == nil {
		return buf
	}
	return io.MultiWriter(buf, w)
}

// Capped keeps the first sandbox.MaxOutput bytes written to it and accepts (and
// drops, counting them) the rest: the output a Result keeps.
type Capped struct {
	bytes.Buffer
	dropped int64
}

// Write implements io.Writer.
func (c *Capped) Write(p []byte) (int, error) {
	keep := min(len(p), max(0, sandbox.MaxOutput-c.Len()))
	c.Buffer.Write(p[:keep])
	c.dropped += int64(len(p) - keep)
	return len(p), nil
}

// Dropped is how many bytes were written past sandbox.MaxOutput.
func (c *Capped) Dropped() int64 { return c.dropped }
