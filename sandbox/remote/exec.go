package remote

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/internal/proc"
)

// killWait bounds how long Exec waits for a killed command's stream to end.
const killWait = 10 * time.Second

// execToken is the environment variable that marks a command's processes
// (the guard sets it; a command's own Env cannot).
const execToken = "RATH_EXEC"

type ran struct {
	code int
	err  error
}

// Exec implements sandbox.Sandbox. The command runs under the guard in its
// directory of the workspace; a timeout, a cancelled ctx or a lost stream
// kills every process it started.
func (s *Sandbox) Exec(ctx context.Context, c sandbox.Command) (sandbox.Result, error) {
	if err := s.live(); err != nil {
		return sandbox.Result{}, err
	}
	argv, err := proc.Argv(c)
	if err != nil {
		return sandbox.Result{}, err
	}
	dir := c.Dir
	if dir == "" {
		dir = "."
	}
	if dir, err = sandbox.Clean(dir); err != nil {
		return sandbox.Result{}, err
	}
	mark := token()
	env := s.env(c)
	delete(env, execToken)
	var stdout, stderr proc.Capped
	o, e, flush := s.outputs(proc.Tee(&stdout, c.Stdout), proc.Tee(&stderr, c.Stderr))
	p := Proc{Args: append(s.guardArgs("exec", mark, dir), argv...), Env: env, Dir: s.ws, Stdin: c.Stdin, Stdout: o, Stderr: e, Scratch: s.stage}
	start := time.Now()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan ran, 1)
	go func() {
		code, err := s.cfg.Conn.Run(runCtx, p)
		done <- ran{code, err}
	}()
	var expired <-chan time.Time
	timeout := proc.Timeout(c, s.cfg.Spec)
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	var r ran
	var timedOut bool
	select {
	case r = <-done:
	case <-expired:
		timedOut = true
		r = s.stop(mark, done, cancel)
	case <-ctx.Done():
		r = s.stop(mark, done, cancel)
	}
	flush()
	res := sandbox.Result{ExitCode: r.code, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Dropped: stdout.Dropped() + stderr.Dropped(), Duration: time.Since(start)}
	switch {
	case ctx.Err() != nil:
		res.ExitCode = -1
		return res, ctx.Err()
	case timedOut:
		res.ExitCode, res.TimedOut = -1, true
		return res, fmt.Errorf("%w after %s: %s", sandbox.ErrTimeout, timeout, argv[0])
	case r.err != nil:
		res.ExitCode = -1
		if errors.Is(r.err, sandbox.ErrInterrupted) {
			s.kill(mark) // leave nothing of it running
		}
		return res, fmt.Errorf("%s sandbox %s: %s: %w", s.cfg.Backend, s.cfg.ID, argv[0], r.err)
	}
	if kind, ok := s.guardFailure(r.code, res.Stderr); ok {
		return sandbox.Result{}, guardError(kind, "directory "+dir)
	}
	return res, nil
}

// env is a command's environment beyond the sandbox's own: the spec's Env,
// its secrets, then the command's Env.
func (s *Sandbox) env(c sandbox.Command) map[string]string {
	env := make(map[string]string, len(s.cfg.Spec.Env)+len(s.secrets)+len(c.Env)+1)
	maps.Copy(env, s.cfg.Spec.Env)
	maps.Copy(env, s.secrets)
	maps.Copy(env, c.Env)
	return env
}

// stop kills a running command's processes and waits for its stream.
func (s *Sandbox) stop(mark string, done <-chan ran, cancel context.CancelFunc) ran {
	s.kill(mark)
	select {
	case r := <-done:
		return r
	case <-time.After(killWait):
	}
	cancel()
	return <-done
}

// kill kills every process carrying the command's mark, best effort.
func (s *Sandbox) kill(mark string) {
	ctx, cancel := context.WithTimeout(context.Background(), killWait)
	defer cancel()
	_, _ = s.guard(ctx, "processes", "kill", mark)
}
