package opensandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	sandbox.Register(Name, &Backend{})
}

// The metadata keys rath gives every sandbox it creates.
const (
	MetaRath    = "rath"
	MetaSession = "rath.session"
	MetaHost    = "rath.host"
	MetaPID     = "rath.pid"
)

// keepAlive is the entrypoint of every sandbox rath creates: the spec
// requires one with an image, and the sandbox lives as long as it runs
// (the server's own default for a snapshot).
var keepAlive = []string{"tail", "-f", "/dev/null"}

// The resource limits the SDKs send when a caller names none (the API
// requires resourceLimits).
const (
	defaultCPU    = "1"
	defaultMemory = "2Gi"
)

// Backend opens sandboxes on OpenSandbox. The registered backend reads its
// options from the environment on each use, unless Use set them.
type Backend struct {
	mu   sync.Mutex
	opts *Options // set by Use, or New

	noSnapshot atomic.Bool // learned: the deployment has no snapshots
}

// New returns a backend with fixed options (not registered).
func New(o Options) *Backend { return &Backend{opts: &o} }

// Use sets the options of the registered backend, in place of the
// environment's.
func Use(o Options) error {
	b, err := sandbox.Lookup(Name)
	if err != nil {
		return err
	}
	ob, ok := b.(*Backend)
	if !ok {
		return fmt.Errorf("opensandbox: the backend %q is not this package's", Name)
	}
	ob.mu.Lock()
	ob.opts = &o
	ob.mu.Unlock()
	ob.noSnapshot.Store(false)
	return nil
}

// Options returns the backend's options as set (not the environment's).
func (b *Backend) Options() Options {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.opts == nil {
		return FromEnv()
	}
	return *b.opts
}

// configured reports whether the backend was given options, by Use or New,
// by the environment (OPEN_SANDBOX_API_URL or OPEN_SANDBOX_DOMAIN) or by
// rath's config file (an unreadable one counts: using it says why).
func (b *Backend) configured() bool {
	b.mu.Lock()
	set := b.opts != nil
	b.mu.Unlock()
	if set || envURL() != "" {
		return true
	}
	file, err := remote.FileSettings(Name)
	return err != nil || file != nil
}

// client returns the backend's lifecycle API, or why it cannot have one.
func (b *Backend) client() (*api, error) {
	b.mu.Lock()
	opts := b.opts
	b.mu.Unlock()
	var o Options
	var err error
	if opts != nil {
		o = *opts
	} else if o, err = FromEnv().withFile(); err != nil {
		return nil, err
	}
	if o, err = o.withDefaults(); err != nil {
		return nil, err
	}
	return &api{o: o, http: o.httpClient()}, nil
}

// Available implements sandbox.Backend: the lifecycle API answers a
// listing with these credentials.
func (b *Backend) Available(ctx context.Context) error {
	a, err := b.client()
	if err != nil {
		return fmt.Errorf("%w: %v", sandbox.ErrUnavailable, err)
	}
	a.o.Retry.Attempts = 1
	if _, err := a.list(ctx, map[string]string{MetaRath: "1"}); err != nil {
		return fmt.Errorf("%w: opensandbox at %s (OPEN_SANDBOX_API_URL): %v", sandbox.ErrUnavailable, a.o.APIURL, err)
	}
	return nil
}

// Open implements sandbox.Backend: a new sandbox from the spec's Image,
// else the configured image.
func (b *Backend) Open(ctx context.Context, spec session.Spec) (sandbox.Sandbox, error) {
	a, err := b.client()
	if err != nil {
		return nil, err
	}
	return b.create(ctx, a, spec, "")
}

// create makes a sandbox from the image (or the snapshot), waits until it
// runs and opens it; a sandbox that fails on the way is deleted.
func (b *Backend) create(ctx context.Context, a *api, spec session.Spec, snapshot string) (*remote.Sandbox, error) {
	image := a.o.Image
	if spec.Image != "" {
		image = spec.Image
	}
	req := createRequest{Entrypoint: keepAlive, Timeout: seconds(a.o.Lifetime), ResourceLimits: limits(spec), Metadata: metadata(ctx)}
	from := fmt.Sprintf("image %q", image)
	if snapshot != "" {
		req.SnapshotID, from = snapshot, fmt.Sprintf("snapshot %q", snapshot)
	} else {
		req.Image = &imageSpec{URI: image}
	}
	sb, err := a.create(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("opensandbox: creating a sandbox from %s: %w", from, err)
	}
	rs, err := b.started(ctx, a, sb, spec, image, snapshot)
	if err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if kerr := a.kill(dctx, sb.ID); kerr != nil && !errors.Is(kerr, sandbox.ErrNotFound) {
			err = fmt.Errorf("%w (and deleting it failed: %v)", err, kerr)
		} else {
			err = fmt.Errorf("%w; the sandbox was deleted", err)
		}
		return nil, err
	}
	return rs, nil
}

// started waits for a created sandbox to run, then opens it.
func (b *Backend) started(ctx context.Context, a *api, sb sandboxJSON, spec session.Spec, image, snapshot string) (*remote.Sandbox, error) {
	if err := b.await(ctx, a, sb, false); err != nil {
		return nil, err
	}
	return b.open(ctx, a, sb.ID, spec, image, snapshot)
}

// limits are the spec's limits as resourceLimits (the SDKs' defaults for
// what it leaves open).
func limits(spec session.Spec) map[string]string {
	m := map[string]string{"cpu": defaultCPU, "memory": defaultMemory}
	if spec.CPUs > 0 {
		m["cpu"] = strconv.Itoa(max(1, int(spec.CPUs*1000+0.5))) + "m"
	}
	if spec.MemoryBytes > 0 {
		if spec.MemoryBytes%(1<<20) == 0 {
			m["memory"] = strconv.FormatInt(spec.MemoryBytes>>20, 10) + "Mi"
		} else {
			m["memory"] = strconv.FormatInt(spec.MemoryBytes, 10)
		}
	}
	return m
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

// await polls a sandbox until it runs. A paused one is resumed if resume
// is set. It fails at once on a state that does not lead to Running, and
// after StartTimeout on one that does but lasts (a new sandbox stuck in
// Pending).
func (b *Backend) await(ctx context.Context, a *api, sb sandboxJSON, resume bool) error {
	deadline := time.Now().Add(a.o.StartTimeout)
	resumed := false
	for {
		st := sb.Status
		switch st.State {
		case stateRunning:
			return nil
		case stateFailed, stateTerminated, stateStopping:
			if !resume {
				return fmt.Errorf("opensandbox: sandbox %s did not start: %s", sb.ID, st)
			}
			return fmt.Errorf("%w: opensandbox sandbox %s has ended: %s", sandbox.ErrNotFound, sb.ID, st)
		case statePaused:
			if !resume {
				return fmt.Errorf("opensandbox: sandbox %s is paused", sb.ID)
			}
			if !resumed {
				if err := a.resume(ctx, sb.ID); err != nil && !isStatus(err, http.StatusConflict) {
					return fmt.Errorf("opensandbox: resuming sandbox %s: %w", sb.ID, err)
				}
				resumed = true
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("opensandbox: sandbox %s was stuck in %s for %s (the start timeout); gave up on it", sb.ID, st, a.o.StartTimeout)
		}
		t := time.NewTimer(a.o.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		var err error
		if sb, err = a.get(ctx, sb.ID); err != nil {
			return err
		}
	}
}

func isStatus(err error, status int) bool {
	var se *remote.StatusError
	return errors.As(err, &se) && se.Status == status
}

// open connects to a running sandbox's execd and opens its workspace.
func (b *Backend) open(ctx context.Context, a *api, id string, spec session.Spec, image, snapshot string) (*remote.Sandbox, error) {
	ep, err := a.endpoint(ctx, id, execdPort)
	if err != nil {
		return nil, fmt.Errorf("opensandbox: the execd endpoint of sandbox %s: %w", id, err)
	}
	conn := newExecd(a.http, a.o, id, ep, func(ctx context.Context) error { return b.gone(ctx, a, id) })
	if err := conn.ready(ctx, a.o.StartTimeout, a.o.Poll); err != nil {
		return nil, err
	}
	return remote.New(ctx, remote.Config{
		Backend: Name,
		ID:      id,
		Conn:    conn,
		Spec:    spec,
		Caps:    sandbox.Capabilities{Isolated: true, Limits: true, Reattach: true},
		Remote:  session.Remote{Provider: Name, URL: a.o.APIURL, Template: image, SnapshotID: snapshot},
		Clone:   func(ctx context.Context, src *remote.Sandbox) (sandbox.Sandbox, error) { return b.clone(ctx, a, src) },
		Detach:  func() error { conn.http.CloseIdleConnections(); return nil },
		Renew: func(ctx context.Context) error {
			return a.renew(ctx, id, time.Now().Add(a.o.Lifetime).Truncate(time.Second))
		},
		RenewEvery: a.o.RenewEvery,
	})
}

// gone returns an error wrapping sandbox.ErrNotFound if the sandbox no
// longer exists, has ended or is paused, else nil.
func (b *Backend) gone(ctx context.Context, a *api, id string) error {
	d, err := a.get(ctx, id)
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		return fmt.Errorf("%w: opensandbox sandbox %s no longer exists (its timeout ended, or it was deleted)", sandbox.ErrNotFound, id)
	case err != nil:
		return nil
	}
	switch d.Status.State {
	case stateStopping, stateTerminated, stateFailed:
		return fmt.Errorf("%w: opensandbox sandbox %s no longer exists: it is %s", sandbox.ErrNotFound, id, d.Status)
	case statePausing, statePaused:
		return fmt.Errorf("%w: opensandbox sandbox %s is paused (attach it again to resume it)", sandbox.ErrNotFound, id)
	}
	return nil
}

// Attach implements sandbox.Backend: a paused sandbox is resumed, and the
// sandbox's expiration is renewed to Lifetime from now.
func (b *Backend) Attach(ctx context.Context, id string, spec session.Spec) (sandbox.Sandbox, error) {
	a, err := b.client()
	if err != nil {
		return nil, err
	}
	d, err := a.get(ctx, id)
	if err == nil {
		err = b.await(ctx, a, d, true)
	}
	if err == nil {
		err = b.renew(ctx, a, d)
	}
	if err != nil {
		return nil, fmt.Errorf("opensandbox: reattaching sandbox %s: %w", id, err)
	}
	image := spec.Image
	if d.Image != nil && d.Image.URI != "" {
		image = d.Image.URI
	}
	if image == "" && d.SnapshotID == "" {
		image = a.o.Image
	}
	return b.open(ctx, a, id, spec, image, d.SnapshotID)
}

// renew moves an expiring sandbox's end to Lifetime from now, unless it
// is later already.
func (b *Backend) renew(ctx context.Context, a *api, d sandboxJSON) error {
	at := time.Now().Add(a.o.Lifetime).Truncate(time.Second)
	if d.ExpiresAt == nil || !at.After(*d.ExpiresAt) {
		return nil
	}
	err := a.renew(ctx, d.ID, at)
	if isStatus(err, http.StatusConflict) || isStatus(err, http.StatusBadRequest) {
		return nil // not extended: it ends later already
	}
	return err
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

// Release implements sandbox.Provider: as Options.OnClose says.
func (b *Backend) Release(ctx context.Context, id string) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	return remote.Release(ctx, a.o.OnClose, func(ctx context.Context) error { return a.kill(ctx, id) },
		func(ctx context.Context) error { return pause(ctx, a, id) })
}

// Pause implements sandbox.Provider.
func (b *Backend) Pause(ctx context.Context, id string) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	if err := pause(ctx, a, id); !errors.Is(err, sandbox.ErrNotFound) {
		return err
	}
	return nil
}

// pause pauses a sandbox; one that is not running (paused already, or on
// its way out) is left as it is.
func pause(ctx context.Context, a *api, id string) error {
	if err := a.pause(ctx, id); !isStatus(err, http.StatusConflict) {
		return err
	}
	return nil
}

// List implements sandbox.Provider: the sandboxes whose metadata names
// rath, but those terminated.
// Unless the backend is configured (by Use, New or the environment),
// or the service cannot be reached, it fails with an error wrapping
// sandbox.ErrUnavailable: a listing across providers skips it.
func (b *Backend) List(ctx context.Context) ([]sandbox.Listed, error) {
	if !b.configured() {
		return nil, fmt.Errorf("%w: opensandbox needs OPEN_SANDBOX_API_URL or OPEN_SANDBOX_DOMAIN (where its lifecycle API is)", sandbox.ErrUnavailable)
	}
	a, err := b.client()
	if err != nil {
		return nil, err
	}
	ds, err := a.list(ctx, map[string]string{MetaRath: "1"})
	if neverSent(err) {
		return nil, fmt.Errorf("%w: opensandbox at %s: %v", sandbox.ErrUnavailable, a.o.APIURL, err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.Listed, 0, len(ds))
	for _, d := range ds {
		if d.Status.State == stateTerminated {
			continue
		}
		pid, _ := strconv.Atoi(d.Metadata[MetaPID])
		l := sandbox.Listed{
			Backend: Name, ID: d.ID, State: d.Status.State, Template: d.from(),
			Session: d.Metadata[MetaSession], Host: d.Metadata[MetaHost], PID: pid, Started: d.CreatedAt,
		}
		if d.ExpiresAt != nil {
			l.Ends = *d.ExpiresAt
		}
		out = append(out, l)
	}
	return out, nil
}

// SetLifetime moves a sandbox's expiration to d from now (later only: the
// API does not shorten it).
func (b *Backend) SetLifetime(ctx context.Context, id string, d time.Duration) error {
	a, err := b.client()
	if err != nil {
		return err
	}
	return a.renew(ctx, id, time.Now().Add(d))
}
