package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openrath/rath/session"
)

// Backend opens sandboxes of one kind.
type Backend interface {
	// Available returns nil if the backend can run here, or an error
	// wrapping ErrUnavailable that says what is missing.
	Available(ctx context.Context) error
	// Open makes a new sandbox for spec.
	Open(ctx context.Context, spec session.Spec) (Sandbox, error)
	// Attach finds the sandbox id again (after a restart), or fails with
	// ErrNotFound; backends that cannot reattach return ErrNotFound too.
	Attach(ctx context.Context, id string, spec session.Spec) (Sandbox, error)
}

var (
	regMu    sync.RWMutex
	backends = map[string]Backend{}
)

// Register makes a backend available under name; registering twice panics.
func Register(name string, b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := backends[name]; dup {
		panic("sandbox: backend " + name + " registered twice")
	}
	backends[name] = b
}

// Backends lists the registered names.
func Backends() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(backends))
	for k := range backends {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the backend registered as name.
func Lookup(name string) (Backend, error) {
	regMu.RLock()
	b := backends[name]
	regMu.RUnlock()
	if b == nil {
		return nil, fmt.Errorf("%w: no sandbox backend %q (registered: %s)", ErrNotFound, name, strings.Join(Backends(), ", "))
	}
	return b, nil
}

// Open opens a new sandbox of the named backend.
func Open(ctx context.Context, backend string, spec session.Spec) (Sandbox, error) {
	b, err := Lookup(backend)
	if err != nil {
		return nil, err
	}
	return b.Open(ctx, spec)
}

// Attach finds sandbox id of the named backend again.
func Attach(ctx context.Context, backend, id string, spec session.Spec) (Sandbox, error) {
	b, err := Lookup(backend)
	if err != nil {
		return nil, err
	}
	return b.Attach(ctx, id, spec)
}

// NewID returns a fresh sandbox id, "sbx_" and 16 hex digits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sbx_" + hex.EncodeToString(b[:])
}

// ValidID reports whether id has NewID's form (it names a directory).
func ValidID(id string) bool {
	if len(id) != 20 || !strings.HasPrefix(id, "sbx_") {
		return false
	}
	_, err := hex.DecodeString(id[4:])
	return err == nil
}

// WorkspacesDir is where sandboxes whose spec names no Dir keep their
// workspaces: $RATH_HOME/workspaces, else ./.rath/workspaces.
func WorkspacesDir() string {
	if h := os.Getenv("RATH_HOME"); h != "" {
		return filepath.Join(h, "workspaces")
	}
	return filepath.Join(".rath", "workspaces")
}

// WorkspaceFor returns the workspace directory of sandbox id for spec: the
// spec's Dir if it names one, else WorkspacesDir()/id. It creates it.
func WorkspaceFor(id string, spec session.Spec) (string, error) {
	dir := spec.Dir
	if dir == "" {
		dir = filepath.Join(WorkspacesDir(), id)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("sandbox: workspace %s: %w", abs, err)
	}
	return abs, nil
}

// cloneDir returns a fresh directory for a clone of a workspace.
func cloneDir(id string) (string, error) {
	return filepath.Abs(filepath.Join(WorkspacesDir(), id))
}

// Provider is a backend whose sandboxes live outside this process (a
// remote service): they can be listed, and must be ended on purpose.
type Provider interface {
	Backend
	// List returns the sandboxes rath created there, running or paused.
	List(ctx context.Context) ([]Listed, error)
	// Kill ends a sandbox for good.
	Kill(ctx context.Context, id string) error
	// Release ends a sandbox a pool opened, as the backend is configured
	// to (kill it, pause it, or leave it running until its timeout).
	Release(ctx context.Context, id string) error
	// Pause stops a sandbox, keeping its workspace, until Attach resumes
	// it (its lifetime does not run while it is paused). A sandbox that is
	// paused or gone already is no error.
	Pause(ctx context.Context, id string) error
}

// ProviderOf returns the backend registered as name if it is a Provider,
// nil if it is not one; ErrNotFound if no backend has that name.
func ProviderOf(name string) (Provider, error) {
	b, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	p, _ := b.(Provider)
	return p, nil
}

// Listed is a sandbox a Provider lists, with the metadata rath gave it.
type Listed struct {
	Backend  string    `json:"backend"`
	ID       string    `json:"id"`
	State    string    `json:"state"`
	Template string    `json:"template,omitempty"`
	Session  string    `json:"session,omitempty"`
	Host     string    `json:"host,omitempty"`
	PID      int       `json:"pid,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Ends     time.Time `json:"ends,omitzero"`
}

type sessionKey struct{}

// WithSession returns ctx naming the session a sandbox is opened for;
// remote backends record it in the sandbox's metadata.
func WithSession(ctx context.Context, id session.ID) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionOf returns the session WithSession named, or "".
func SessionOf(ctx context.Context) session.ID {
	id, _ := ctx.Value(sessionKey{}).(session.ID)
	return id
}
