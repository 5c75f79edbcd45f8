package e2b

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
	"github.com/openrath/rath/session"
)

func init() {
	sandbox.Register(E2B, &Backend{provider: E2B})
	sandbox.Register(Cube, &Backend{provider: Cube})
}

// The metadata keys rath gives every sandbox it creates.
const (
	MetaRath    = "rath"
	MetaSession = "rath.session"
	MetaHost    = "rath.host"
	MetaPID     = "rath.pid"
)

// Backend opens sandboxes on E2B or Cube. The registered backends read
// their options from the environment on each use, unless Use set them.
type Backend struct {
	provider string

	mu   sync.Mutex
	opts *Options // set by Use, or New

	noFork, noSnapshot atomic.Bool // learned: the deployment lacks them
}

// New returns a backend with fixed options (not registered).
func New(o Options) *Backend {
	if o.Provider == "" {
		o.Provider = E2B
	}
	return &Backend{provider: o.Provider, opts: &o}
}

// Use sets the options of the registered backend named provider (E2B or
// Cube), in place of the environment's.
func Use(provider string, o Options) error {
	b, err := sandbox.Lookup(provider)
	if err != nil {
		return err
	}
	eb, ok := b.(*Backend)
	if !ok {
		return fmt.Errorf("e2b: the backend %q is not this package's", provider)
	}
	o.Provider = provider
	eb.mu.Lock()
	eb.opts = &o
	eb.mu.Unlock()
	eb.noFork.Store(false)
	eb.noSnapshot.Store(false)
	return nil
}

// client returns the backend's control plane, or why it cannot have one.
func (b *Backend) client() (*api, error) {
	b.mu.Lock()
	opts := b.opts
	b.mu.Unlock()
	var o Options
	var err error
	if opts != nil {
		o = *opts
	} else if o, err = FromEnv(b.provider).withFile(); err != nil {
		return nil, err
	}
	o.Provider = b.provider
	if o, err = o.withDefaults(); err != nil {
		return nil, err
	}
	if m := o.missing(); m != "" {
		return nil, fmt.Errorf("%w: %s needs %s", sandbox.ErrUnavailable, b.provider, m)
	}
	hc, err := o.httpClient()
	if err != nil {
		return nil, err
	}
	return &api{o: o, http: hc}, nil
}

// Available implements sandbox.Backend: the provider is configured and its
// API answers a listing with these credentials.
func (b *Backend) Available(ctx context.Context) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	a.o.Retry.Attempts = 1
	if _, err := a.list(ctx, map[string]string{MetaRath: "1"}); err != nil {
		return fmt.Errorf("%w: %s at %s: %v", sandbox.ErrUnavailable, b.provider, a.o.APIURL, err)
	}
	return nil
}

// Open implements sandbox.Backend: a new sandbox from the spec's Image
// (a template id), else the configured template.
func (b *Backend) Open(ctx context.Context, spec session.Spec) (sandbox.Sandbox, error) {
	a, err := b.client()
	if err != nil {
		return nil, err
	}
	return b.create(ctx, a, spec, "")
}

// create makes a sandbox from the template (or snapshot) and opens it.
func (b *Backend) create(ctx context.Context, a *api, spec session.Spec, snapshot string) (*remote.Sandbox, error) {
	template := a.o.Template
	if spec.Image != "" {
		template = spec.Image
	}
	from := template
	if snapshot != "" {
		from = snapshot
	}
	req := newSandbox{TemplateID: from, Timeout: seconds(a.o.Lifetime), Metadata: metadata(ctx), Secure: true}
	if b.provider == E2B {
		req.AllowInternetAccess = &spec.Network
	}
	sb, err := a.create(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: creating a sandbox from %q: %w", b.provider, from, err)
	}
	rs, err := b.open(ctx, a, sb, spec, template, snapshot)
	if err != nil {
		_ = a.kill(context.WithoutCancel(ctx), sb.SandboxID)
		return nil, err
	}
	return rs, nil
}

// metadata is what rath records on a sandbox it creates.
func metadata(ctx context.Context) map[string]string {
	host, _ := os.Hostname()
	m := map[string]string{MetaRath: "1", MetaHost: host, MetaPID: strconv.Itoa(os.Getpid())}
	if id := sandbox.SessionOf(ctx); id != "" {
		m[MetaSession] = string(id)
	}
	return m
}

// open wraps a created or connected sandbox.
func (b *Backend) open(ctx context.Context, a *api, sb created, spec session.Spec, template, snapshot string) (*remote.Sandbox, error) {
	conn := newEnvd(a.http, a.o, sb, func(ctx context.Context) error { return b.gone(ctx, a, sb.SandboxID) })
	domain := a.o.Domain
	if sb.Domain != nil && *sb.Domain != "" {
		domain = *sb.Domain
	}
	if template == "" {
		template = sb.TemplateID
	}
	return remote.New(ctx, remote.Config{
		Backend: b.provider,
		ID:      sb.SandboxID,
		Conn:    conn,
		Spec:    spec,
		Caps:    sandbox.Capabilities{Isolated: true, NetworkControl: b.provider == E2B, Reattach: true},
		Remote:  session.Remote{Provider: b.provider, URL: a.o.APIURL, Domain: domain, Template: template, SnapshotID: snapshot},
		Clone:   func(ctx context.Context, src *remote.Sandbox) (sandbox.Sandbox, error) { return b.clone(ctx, a, src) },
		Detach:  func() error { conn.http.CloseIdleConnections(); return nil },
		Renew: func(ctx context.Context) error {
			if b.provider == Cube { // no set-timeout route: connect extends it
				_, err := a.connect(ctx, sb.SandboxID)
				return err
			}
			return a.setTimeout(ctx, sb.SandboxID, a.o.Lifetime)
		},
		RenewEvery: a.o.RenewEvery,
	})
}

// gone returns an error wrapping sandbox.ErrNotFound if the sandbox no
// longer exists or is paused, else nil.
func (b *Backend) gone(ctx context.Context, a *api, id string) error {
	d, err := a.get(ctx, id)
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		return fmt.Errorf("%w: %s sandbox %s no longer exists (its lifetime ended, or it was killed)", sandbox.ErrNotFound, b.provider, id)
	case err == nil && d.State == "paused":
		return fmt.Errorf("%w: %s sandbox %s is paused (attach it again to resume it)", sandbox.ErrNotFound, b.provider, id)
	}
	return nil
}

// Attach implements sandbox.Backend: connect resumes the sandbox if it was
// paused and renews its lifetime.
func (b *Backend) Attach(ctx context.Context, id string, spec session.Spec) (sandbox.Sandbox, error) {
	a, err := b.client()
	if err != nil {
		return nil, err
	}
	sb, err := a.connect(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("%s: reattaching sandbox %s: %w", b.provider, id, err)
	}
	return b.open(ctx, a, sb, spec, "", "")
}

// AttachPlacement reattaches a placement's sandbox, or, if it is gone and
// the placement names a snapshot, creates a new one from the snapshot.
func (b *Backend) AttachPlacement(ctx context.Context, pl session.Placement) (sandbox.Sandbox, error) {
	return remote.AttachPlacement(ctx, pl, b.Attach, func(ctx context.Context, spec session.Spec, snapshot string) (sandbox.Sandbox, error) {
		a, err := b.client()
		if err != nil {
			return nil, err
		}
		return b.create(ctx, a, spec, snapshot)
	})
}

// Kill implements sandbox.Provider.
func (b *Backend) Kill(ctx context.Context, id string) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	return a.kill(ctx, id)
}

// Pause implements sandbox.Provider.
func (b *Backend) Pause(ctx context.Context, id string) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	if err := a.pause(ctx, id); !errors.Is(err, sandbox.ErrNotFound) {
		return err
	}
	return nil
}

// Release implements sandbox.Provider: as Options.OnClose says.
func (b *Backend) Release(ctx context.Context, id string) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	return remote.Release(ctx, a.o.OnClose, func(ctx context.Context) error { return a.kill(ctx, id) },
		func(ctx context.Context) error { return a.pause(ctx, id) })
}

// List implements sandbox.Provider: the sandboxes whose metadata names rath.
func (b *Backend) List(ctx context.Context) ([]sandbox.Listed, error) {
	a, err := b.client()
	if err != nil {
		return nil, err
	}
	ds, err := a.list(ctx, map[string]string{MetaRath: "1"})
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.Listed, 0, len(ds))
	for _, d := range ds {
		pid, _ := strconv.Atoi(d.Metadata[MetaPID])
		out = append(out, sandbox.Listed{
			Backend: b.provider, ID: d.SandboxID, State: d.State, Template: d.TemplateID,
			Session: d.Metadata[MetaSession], Host: d.Metadata[MetaHost], PID: pid, Started: d.StartedAt, Ends: d.EndAt,
		})
	}
	return out, nil
}

// SetLifetime renews a sandbox's timeout from now.
func (b *Backend) SetLifetime(ctx context.Context, id string, d time.Duration) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	return a.setTimeout(ctx, id, d)
}

// Options returns the backend's options as set (not the environment's).
func (b *Backend) Options() Options {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.opts == nil {
		return FromEnv(b.provider)
	}
	return *b.opts
}
