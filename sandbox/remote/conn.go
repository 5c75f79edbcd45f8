package remote

import (
	"context"
	"io"
)

// Proc is a process to run in a remote sandbox.
type Proc struct {
	// Args is the true argv; Args[0] is looked up in the sandbox's PATH.
	Args []string
	// Env adds to the sandbox's environment.
	Env map[string]string
	// Dir is the working directory, an absolute path in the sandbox.
	Dir string
	// Stdin, if not nil, is the process's standard input.
	Stdin []byte
	// Stdout and Stderr receive the output as it arrives.
	Stdout, Stderr io.Writer
	// Scratch, if not empty, is a private directory of the sandbox outside
	// the workspace where the Conn may keep files of its own for the
	// process's lifetime (a transport without stdin uploads it there).
	Scratch string
}

// Conn is what a provider offers for one sandbox. Implementations are
// safe for concurrent use.
type Conn interface {
	// Run runs p and returns its exit code. A stream cut before the exit
	// is reported returns an error wrapping sandbox.ErrInterrupted; a
	// cancelled ctx ends the wait (the caller kills the process).
	Run(ctx context.Context, p Proc) (int, error)
	// Upload writes data to the absolute path (its directory exists).
	Upload(ctx context.Context, path string, data []byte) error
	// Download reads the file at the absolute path.
	Download(ctx context.Context, path string) ([]byte, error)
	// Remove deletes the file at the absolute path (a staged file); a
	// missing file is not an error.
	Remove(ctx context.Context, path string) error
	// BinaryOutput reports whether Run delivers output bytes unchanged
	// (else file bytes go through Download).
	BinaryOutput() bool
}
