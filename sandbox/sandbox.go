package sandbox

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

var (
	// ErrEscape: a path leads out of the workspace (absolute, "..", or a
	// symlink pointing outside).
	ErrEscape = errors.New("sandbox: path escapes the workspace")
	// ErrClosed: the sandbox was closed.
	ErrClosed = errors.New("sandbox: closed")
	// ErrNotFound: no such file, or no such sandbox to reattach.
	ErrNotFound = errors.New("sandbox: not found")
	// ErrTimeout: a command ran past its timeout and was killed.
	ErrTimeout = errors.New("sandbox: command timed out")
	// ErrUnavailable: the backend cannot run here (tool or daemon missing).
	ErrUnavailable = errors.New("sandbox: backend unavailable")
	// ErrInterrupted: the connection to a remote sandbox was lost while a
	// command ran; whether it finished is unknown, and it was killed.
	ErrInterrupted = errors.New("sandbox: command interrupted")
)

// Sandbox is a workspace and a way to run commands in it. Paths are
// relative to the workspace root, with "/" separators. Implementations are
// safe for concurrent use.
type Sandbox interface {
	// ID names the sandbox; Attach finds it again by this id.
	ID() string
	// Backend is the registry name of the backend.
	Backend() string
	// WorkspaceDir is the host directory holding the workspace; for a
	// remote sandbox, the workspace's path inside it.
	WorkspaceDir() string
	// Capabilities says what the backend isolates.
	Capabilities() Capabilities

	// Exec runs a command and waits for it. A non-zero exit is not an
	// error (see Result.ExitCode); a timeout kills the command and all its
	// children and returns ErrTimeout with what was captured.
	Exec(ctx context.Context, c Command) (Result, error)

	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile creates or replaces a file, creating its directories.
	WriteFile(ctx context.Context, path string, data []byte) error
	Stat(ctx context.Context, path string) (FileInfo, error)
	// List returns a directory's entries, sorted by name.
	List(ctx context.Context, path string) ([]FileInfo, error)
	// Remove deletes a file or a directory with its contents.
	Remove(ctx context.Context, path string) error
	// Mkdir creates a directory and its parents.
	Mkdir(ctx context.Context, path string) error

	// Mark snapshots the workspace; Effects reports what changed since.
	Mark(ctx context.Context) (*Mark, error)
	Effects(ctx context.Context, since *Mark) (Effects, error)
	// TreeHash is a digest of the workspace's paths, modes and contents.
	TreeHash(ctx context.Context) (string, error)

	// Clone makes a new sandbox of the same backend and spec whose
	// workspace is a copy of this one's now.
	Clone(ctx context.Context) (Sandbox, error)
	// Close releases the sandbox; later calls fail with ErrClosed. The
	// workspace directory is kept (the session's files are evidence, and
	// Attach finds them again).
	Close() error
}

// Command is a command to run. Exactly one of Args and Shell is set.
type Command struct {
	// Args is argv: Args[0] is looked up in the sandbox's PATH.
	Args []string
	// Shell is a script for sh -c.
	Shell string
	// Env adds to the sandbox's environment.
	Env map[string]string
	// Dir is the working directory, relative to the workspace.
	Dir   string
	Stdin []byte
	// Timeout bounds the command (0: the spec's timeout, or none).
	Timeout time.Duration
	// Stdout and Stderr, if set, also receive the output as it comes.
	Stdout, Stderr io.Writer
	// Egress decides each connection the command opens, on a backend
	// whose Capabilities report EgressControl and a spec with Network on
	// (nil: AllowAll). The decisions are in Result.Egress.
	Egress Egress
}

// Result is what a command did.
type Result struct {
	ExitCode int    `json:"exit_code"`
	Stdout   []byte `json:"stdout,omitempty"`
	Stderr   []byte `json:"stderr,omitempty"`
	// Dropped counts the output bytes past the first MaxOutput of stdout
	// and of stderr, which the Result does not keep (Command.Stdout and
	// Stderr still received them).
	Dropped  int64         `json:"dropped_bytes,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	TimedOut bool          `json:"timed_out,omitempty"`
	// Egress records the command's connections as they were decided
	// (backends with EgressControl), the first MaxConnections of them;
	// EgressDropped counts the rest.
	Egress        []Connection `json:"egress,omitempty"`
	EgressDropped int64        `json:"egress_dropped,omitempty"`
}

// FileInfo describes a workspace entry.
type FileInfo struct {
	Path    string      `json:"path"`
	Size    int64       `json:"size"`
	Mode    fs.FileMode `json:"mode"`
	ModTime time.Time   `json:"mod_time"`
	IsDir   bool        `json:"is_dir,omitempty"`
}

// Capabilities says what a backend isolates and offers.
type Capabilities struct {
	// Isolated: commands cannot see the host's files outside the
	// workspace (and a read-only root).
	Isolated bool `json:"isolated"`
	// NetworkControl: the spec's Network flag is enforced.
	NetworkControl bool `json:"network_control"`
	// Limits: memory, CPU and process limits are enforced.
	Limits bool `json:"limits"`
	// Reattach: a sandbox can be found again by id after a restart.
	Reattach bool `json:"reattach"`
	// EgressControl: with the spec's Network on, a command's only way out
	// is a proxy the runtime runs, and every connection is decided by
	// Command.Egress and recorded in Result.Egress.
	EgressControl bool `json:"egress_control"`
}
