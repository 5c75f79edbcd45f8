package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

// hostConn is a remote.Conn whose "sandbox" is this host: processes run
// locally with a home of their own, files are the host's. With text set
// it carries output as execd does, one line at a time with its ending
// restored (a last line without one gains it).
type hostConn struct {
	home string
	text bool
	runs atomic.Int64
}

func (c *hostConn) BinaryOutput() bool { return !c.text }

func (c *hostConn) Run(ctx context.Context, p remote.Proc) (int, error) {
	c.runs.Add(1)
	cmd := exec.CommandContext(ctx, p.Args[0], p.Args[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.home}
	for k, v := range p.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if p.Stdin != nil {
		cmd.Stdin = bytes.NewReader(p.Stdin)
	}
	out, errw := p.Stdout, p.Stderr
	var lo, le *lines
	if c.text {
		lo, le = &lines{w: out}, &lines{w: errw}
		out, errw = lo, le
	}
	cmd.Stdout, cmd.Stderr = out, errw
	err := cmd.Run()
	if c.text {
		lo.end()
		le.end()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	}
	return -1, err
}

func (c *hostConn) Upload(_ context.Context, path string, data []byte) error {
	return os.WriteFile(path, data, 0o644)
}

func (c *hostConn) Download(_ context.Context, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", sandbox.ErrNotFound, path)
	}
	return b, err
}

func (c *hostConn) Remove(_ context.Context, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// lines re-chunks output into whole lines, as a line-based transport does.
type lines struct {
	w   io.Writer
	buf []byte
}

func (l *lines) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		_, _ = l.w.Write(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
}

func (l *lines) end() {
	if len(l.buf) > 0 {
		_, _ = l.w.Write(append(l.buf, '\n'))
	}
}

// openHost opens a remote sandbox over a hostConn.
func openHost(t testing.TB, text bool, spec session.Spec) *remote.Sandbox {
	t.Helper()
	home := t.TempDir()
	conn := &hostConn{home: home, text: text}
	clone := func(ctx context.Context, src *remote.Sandbox) (sandbox.Sandbox, error) {
		dst := openHost(t, text, src.Spec())
		if err := remote.CopyTo(ctx, src, dst); err != nil {
			return nil, err
		}
		return dst, nil
	}
	sb, err := remote.New(context.Background(), remote.Config{
		Backend: "host", ID: filepath.Base(home), Conn: conn, Spec: spec,
		Caps: sandbox.Capabilities{Reattach: true}, Clone: clone,
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}
