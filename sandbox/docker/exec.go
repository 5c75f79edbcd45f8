package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/egress"
	"github.com/openrath/rath/sandbox/internal/proc"
)

// stopGrace is how long a killed command's output may take to close
// before the connection is dropped.
const stopGrace = 5 * time.Second

// stateDir is a small tmpfs of the commands' user for the wrapper's
// records.
const stateDir = "/run/rath"

// wrapper starts every command, with a token naming it and then argv. It
// runs the command in a new session (so in a process group of its own,
// apart from the wrapper's), passing stdin on (sh gives a background job
// /dev/null unless told), records the group in stateDir/<token> for
// killGroup, and when the command exits kills what is left of its group —
// background children holding the output open — and exits with the
// command's status.
const wrapper = `f=` + stateDir + `/$1; shift
exec 3<&0
setsid "$@" <&3 3<&- &
p=$!
exec 3<&-
echo "$p" >"$f"
wait "$p"; rc=$?
kill -s KILL "-$p" 2>/dev/null
rm -f "$f"
exit "$rc"`

// killer kills the group recorded under token $1, waiting a little for the
// wrapper to record it.
const killer = `f=` + stateDir + `/$1; i=0
while [ ! -s "$f" ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
kill -s KILL "-$(cat "$f")"`

// Exec implements sandbox.Sandbox.
func (s *Sandbox) Exec(ctx context.Context, c sandbox.Command) (res sandbox.Result, err error) {
	if s.Closed() {
		return sandbox.Result{}, sandbox.ErrClosed
	}
	argv, err := proc.Argv(c)
	if err != nil {
		return sandbox.Result{}, err
	}
	wd, err := s.workdir(ctx, c.Dir)
	if err != nil {
		return sandbox.Result{}, err
	}
	start := time.Now()
	timeout := proc.Timeout(c, s.spec)
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	env := proc.Env(s.spec, WorkspacePath, c)
	if s.spec.Network {
		g, gerr := s.openGate(ctx, c.Egress)
		if gerr != nil {
			return sandbox.Result{}, gerr
		}
		env = egress.SetProxyEnv(env, g.addr)
		defer func() {
			var gerr error
			res.Egress, res.EgressDropped, gerr = g.close()
			if err == nil && gerr != nil {
				err = fmt.Errorf("docker: sandbox %s: egress proxy: %w", s.id, gerr)
			}
		}()
	}
	token := newToken()
	ex, err := s.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{
		User:         s.user.String(),
		AttachStdin:  c.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          env,
		WorkingDir:   wd,
		Cmd:          append([]string{"sh", "-c", wrapper, "sh", token}, argv...),
	})
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("docker: sandbox %s: running %s: %w", s.id, argv[0], err)
	}
	att, err := s.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("docker: sandbox %s: running %s: %w", s.id, argv[0], err)
	}
	stdinDone := make(chan struct{})
	defer func() {
		att.Close()
		<-stdinDone
	}()
	if c.Stdin != nil {
		go func() {
			defer close(stdinDone)
			// The command may exit without reading it all: errors are
			// expected and mean nothing.
			_, _ = att.Conn.Write(c.Stdin)
			_ = att.CloseWrite()
		}()
	} else {
		close(stdinDone)
	}

	var stdout, stderr proc.Capped
	e := &execution{s: s, execID: ex.ID, token: token, att: &att, done: make(chan error, 1)}
	go func() {
		_, err := stdcopy.StdCopy(proc.Tee(&stdout, c.Stdout), proc.Tee(&stderr, c.Stderr), att.Reader)
		e.done <- err
	}()
	streamErr := e.wait(runCtx)

	res = sandbox.Result{ExitCode: e.exitCode()}
	res.Stdout, res.Stderr, res.Duration = stdout.Bytes(), stderr.Bytes(), time.Since(start)
	res.Dropped = stdout.Dropped() + stderr.Dropped()
	switch {
	case e.killed && ctx.Err() != nil:
		return res, ctx.Err()
	case e.killed:
		res.TimedOut, res.ExitCode = true, -1
		return res, fmt.Errorf("%w after %s: %s", sandbox.ErrTimeout, timeout, argv[0])
	case streamErr != nil && !e.dropped:
		return res, fmt.Errorf("docker: sandbox %s: reading the output of %s: %w", s.id, argv[0], streamErr)
	}
	return res, nil
}

// workdir checks a command's working directory through the workspace (so a
// symlink leading out is refused) and returns its path in the container.
func (s *Sandbox) workdir(ctx context.Context, dir string) (string, error) {
	name, err := sandbox.Clean(dir)
	if err != nil {
		return "", err
	}
	fi, err := s.Stat(ctx, name)
	if err != nil {
		return "", fmt.Errorf("sandbox: working directory %q: %w", dir, err)
	}
	if !fi.IsDir {
		return "", fmt.Errorf("sandbox: working directory %q is not a directory", dir)
	}
	return path.Join(WorkspacePath, name), nil
}

// execution is one running command.
type execution struct {
	s      *Sandbox
	execID string
	token  string
	att    *client.ExecAttachResult
	done   chan error // the output stream ended (StdCopy's error)
	// killed: the context ended first and the group was killed.
	killed bool
	// dropped: the connection was closed here, so a stream error is ours.
	dropped bool
}

// wait waits for the output to end; when ctx ends first, it kills the
// command's process group.
func (e *execution) wait(ctx context.Context) error {
	select {
	case err := <-e.done:
		return err
	case <-ctx.Done():
	}
	e.killed = true
	e.s.killGroup(e.token)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case err := <-e.done:
		return err
	case <-t.C:
		e.dropped = true
		e.att.Close()
		<-e.done
		return nil
	}
}

// exitCode is the command's exit status, once docker has recorded it; -1
// if it has not.
func (e *execution) exitCode() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		ins, err := e.s.cli.ExecInspect(ctx, e.execID, client.ExecInspectOptions{})
		if err != nil {
			return -1
		}
		if !ins.Running {
			return ins.ExitCode
		}
		select {
		case <-ctx.Done():
			return -1
		case <-time.After(wait):
		}
	}
}

// killGroup kills the process group of the command named token, from a
// second exec (the Engine API cannot signal an exec).
func (s *Sandbox) killGroup(token string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ex, err := s.cli.ExecCreate(ctx, s.cid, client.ExecCreateOptions{
		User: s.user.String(),
		Cmd:  []string{"sh", "-c", killer, "sh", token},
	})
	if err != nil {
		return // the connection is dropped after stopGrace anyway
	}
	_, _ = s.cli.ExecStart(ctx, ex.ID, client.ExecStartOptions{Detach: true})
}

// newToken names one command's process group record.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
