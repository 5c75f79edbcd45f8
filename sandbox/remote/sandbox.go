package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// Config is what a backend gives New for one sandbox.
type Config struct {
	// Backend is the registry name; ID the provider's sandbox id.
	Backend, ID string
	Conn        Conn
	Spec        session.Spec
	Caps        sandbox.Capabilities
	// Remote is recorded in the session's placement.
	Remote session.Remote
	// Clone makes a sandbox of the same provider whose workspace is a copy
	// of src's now (a provider fork, or a new sandbox and CopyTo).
	Clone func(ctx context.Context, src *Sandbox) (sandbox.Sandbox, error)
	// Detach, if set, runs on Close (the remote sandbox itself lives on).
	Detach func() error
	// Renew, if set, pushes the sandbox's end back to its full lifetime
	// from now; it is called every RenewEvery while the handle is open.
	Renew      func(ctx context.Context) error
	RenewEvery time.Duration
}

// Sandbox is a sandbox on a remote provider.
type Sandbox struct {
	cfg     Config
	ws      string // the workspace's physical path in the sandbox
	stage   string // a private directory for staged files
	tok     string // marks the guard's own failures
	secrets map[string]string

	texts *textCache
	renew *renewer

	mu     sync.RWMutex
	closed bool
}

// New opens the workspace of a sandbox the backend created or reattached:
// it makes the workspace (the spec's Dir, else ~/workspace) and a staging
// directory in the sandbox. The spec's SecretEnv values are read from this
// host now and given to every command; they are not recorded anywhere.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	s := &Sandbox{cfg: cfg, tok: token(), secrets: map[string]string{}, texts: newTextCache()}
	for _, k := range cfg.Spec.SecretEnv {
		if v, ok := os.LookupEnv(k); ok {
			s.secrets[k] = v
		}
	}
	out, err := s.guard(ctx, "the workspace", "init", cfg.Spec.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s sandbox %s: preparing the workspace: %w", cfg.Backend, cfg.ID, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "/") || !strings.HasPrefix(lines[1], "/") {
		return nil, fmt.Errorf("%s sandbox %s: preparing the workspace: unexpected answer %q", cfg.Backend, cfg.ID, out)
	}
	s.ws, s.stage = lines[0], lines[1]
	if cfg.Renew != nil && cfg.RenewEvery > 0 {
		s.renew = startRenewer(cfg.Renew, cfg.RenewEvery)
	}
	return s, nil
}

func token() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ID implements sandbox.Sandbox: the provider's sandbox id.
func (s *Sandbox) ID() string { return s.cfg.ID }

// Backend implements sandbox.Sandbox.
func (s *Sandbox) Backend() string { return s.cfg.Backend }

// WorkspaceDir implements sandbox.Sandbox: the workspace's path inside the
// sandbox (not a directory of this host).
func (s *Sandbox) WorkspaceDir() string { return s.ws }

// Capabilities implements sandbox.Sandbox.
func (s *Sandbox) Capabilities() sandbox.Capabilities { return s.cfg.Caps }

// Remote is where the sandbox lives, for the session's placement.
func (s *Sandbox) Remote() session.Remote { return s.cfg.Remote }

// Conn is the connection the sandbox runs over.
func (s *Sandbox) Conn() Conn { return s.cfg.Conn }

// Spec is the spec the sandbox was opened for.
func (s *Sandbox) Spec() session.Spec { return s.cfg.Spec }

// Clone implements sandbox.Sandbox.
func (s *Sandbox) Clone(ctx context.Context) (sandbox.Sandbox, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return s.cfg.Clone(ctx, s)
}

// Close implements sandbox.Sandbox: this handle stops working and stops
// renewing the sandbox's lifetime; the remote sandbox and its workspace
// live on (Attach finds them again; the backend or the lifetime ends
// them).
func (s *Sandbox) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.renew.end()
	if s.cfg.Detach != nil {
		return s.cfg.Detach()
	}
	return nil
}

func (s *Sandbox) live() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return sandbox.ErrClosed
	}
	return nil
}
