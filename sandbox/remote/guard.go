package remote

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/openrath/rath/sandbox"
)

//go:embed guard.sh
var guardScript string

// guardExit is the exit code of the guard's own failures.
const guardExit = 125

// guardArgs is the argv that runs the guard's op in the sandbox (in its
// b64 mode where the transport carries text only).
func (s *Sandbox) guardArgs(op string, args ...string) []string {
	if !s.cfg.Conn.BinaryOutput() {
		op = "b64:" + op
	}
	return append([]string{"sh", "-c", guardScript, "rath-guard", s.tok, s.ws, op}, args...)
}

// outputs returns the writers a process's output goes through on its way
// to stdout and stderr, and a flush for the end.
func (s *Sandbox) outputs(stdout, stderr io.Writer) (io.Writer, io.Writer, func()) {
	if s.cfg.Conn.BinaryOutput() {
		return stdout, stderr, func() {}
	}
	o, e := decodeLines(stdout), decodeLines(stderr)
	return o, e, func() { o.flush(); e.flush() }
}

// guard runs one of the guard's operations on the workspace path named
// (for errors) and returns its stdout.
func (s *Sandbox) guard(ctx context.Context, name, op string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	err := s.guardTo(ctx, &out, name, op, args...)
	return out.Bytes(), err
}

// guardTo runs a guard operation with its stdout going to w.
func (s *Sandbox) guardTo(ctx context.Context, w io.Writer, name, op string, args ...string) error {
	var stderr bytes.Buffer
	dir := s.ws
	if dir == "" {
		dir = "/"
	}
	o, e, flush := s.outputs(w, &stderr)
	code, err := s.cfg.Conn.Run(ctx, Proc{Args: s.guardArgs(op, args...), Dir: dir, Stdout: o, Stderr: e, Scratch: s.stage})
	flush()
	if err != nil {
		return err
	}
	if code == 0 {
		return nil
	}
	if kind, ok := s.guardFailure(code, stderr.Bytes()); ok {
		return guardError(kind, name)
	}
	return fmt.Errorf("%s sandbox %s: %s failed with exit code %d: %s", s.cfg.Backend, s.cfg.ID, op, code, strings.TrimSpace(stderr.String()))
}

// guardFailure finds the guard's failure line in stderr.
func (s *Sandbox) guardFailure(code int, stderr []byte) (string, bool) {
	if code != guardExit {
		return "", false
	}
	prefix := "rath-guard:" + s.tok + ":"
	for _, line := range strings.Split(string(stderr), "\n") {
		if kind, ok := strings.CutPrefix(line, prefix); ok {
			return kind, true
		}
	}
	return "", false
}

// errNotDir: a path that must be a directory is not one.
var errNotDir = errors.New("not a directory")

func guardError(kind, what string) error {
	switch kind {
	case "escape":
		return fmt.Errorf("%w: %s (a symlink leads out)", sandbox.ErrEscape, what)
	case "notfound":
		return fmt.Errorf("%w: %s", sandbox.ErrNotFound, what)
	case "gone":
		return fmt.Errorf("%w: the workspace is gone", sandbox.ErrNotFound)
	case "notdir":
		return fmt.Errorf("sandbox: %s: %w", what, errNotDir)
	case "isdir":
		return fmt.Errorf("sandbox: %s is a directory", what)
	}
	return fmt.Errorf("sandbox: %s: %s failed", what, kind)
}
