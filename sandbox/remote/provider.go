package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// What a pool's Close (or a cluster run's end) does to the remote
// sandboxes it created.
const (
	OnCloseKill  = "kill"
	OnClosePause = "pause"
	OnCloseKeep  = "keep"
)

// OnClose checks a configured on-close action; "" is OnCloseKill.
func OnClose(v string) (string, error) {
	switch v {
	case "":
		return OnCloseKill, nil
	case OnCloseKill, OnClosePause, OnCloseKeep:
		return v, nil
	}
	return "", fmt.Errorf("on-close %q: want %s, %s or %s", v, OnCloseKill, OnClosePause, OnCloseKeep)
}

// Lifetimes fills in a provider's lifetime (default 15 minutes, never
// under least) and how often an open handle renews it (default a third
// of it).
func Lifetimes(lifetime, renewEvery, least time.Duration) (time.Duration, time.Duration) {
	if lifetime <= 0 {
		lifetime = 15 * time.Minute
	}
	lifetime = max(lifetime, least)
	if renewEvery <= 0 {
		renewEvery = lifetime / 3
	}
	return lifetime, renewEvery
}

// Release does to a sandbox what onClose says: kill it, pause it, or
// leave it to its lifetime. A sandbox that is gone already (expired, or
// ended by someone else) is released.
func Release(ctx context.Context, onClose string, kill, pause func(ctx context.Context) error) error {
	var err error
	switch onClose {
	case OnCloseKill:
		err = kill(ctx)
	case OnClosePause:
		err = pause(ctx)
	}
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	return err
}

// ErrUnsupported: the deployment does not offer a route (fork,
// snapshots, set-timeout).
var ErrUnsupported = errors.New("not offered by this deployment")

// Unsupported marks a refusal that says the route is not there — 501,
// 405, or a 404 that is not about a sandbox — as ErrUnsupported.
func Unsupported(err error) error {
	var se *StatusError
	if errors.As(err, &se) && (se.Status == http.StatusNotFound && !strings.Contains(strings.ToLower(se.Message), "sandbox") ||
		se.Status == http.StatusMethodNotAllowed || se.Status == http.StatusNotImplemented) {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return err
}

// AttachPlacement reattaches a placement's sandbox with attach or, when
// it is gone and the placement names a snapshot, creates a new one from
// the snapshot with create (for the placement's spec, its image the
// placement's template unless the spec names one). A sandbox that is
// gone without a snapshot stays an error wrapping sandbox.ErrNotFound:
// a session never goes on in a blank workspace.
func AttachPlacement(ctx context.Context, pl session.Placement,
	attach func(ctx context.Context, id string, spec session.Spec) (sandbox.Sandbox, error),
	create func(ctx context.Context, spec session.Spec, snapshot string) (sandbox.Sandbox, error)) (sandbox.Sandbox, error) {
	sb, err := attach(ctx, pl.SandboxID, pl.Spec)
	if err == nil || !errors.Is(err, sandbox.ErrNotFound) || pl.Remote == nil || pl.Remote.SnapshotID == "" {
		return sb, err
	}
	spec := pl.Spec
	if spec.Image == "" {
		spec.Image = pl.Remote.Template
	}
	return create(ctx, spec, pl.Remote.SnapshotID)
}

// CloneByCopy gives src's workspace to a new sandbox that create makes,
// for a provider without fork or snapshots (or one that refused them): the
// workspace is copied over, and a new sandbox the copy failed in is ended
// with kill.
func CloneByCopy(ctx context.Context, src *Sandbox, create func(ctx context.Context) (*Sandbox, error), kill func(ctx context.Context, id string) error) (sandbox.Sandbox, error) {
	dst, err := create(ctx)
	if err != nil {
		return nil, err
	}
	if err := CopyTo(ctx, src, dst); err != nil {
		_ = kill(context.WithoutCancel(ctx), dst.ID())
		return nil, err
	}
	return dst, nil
}

// Offered tries a route a deployment may not offer (fork, snapshots):
// try's sandbox; or nil and no error when the route is not offered,
// which lacks remembers so that it is not asked again.
func Offered(lacks *atomic.Bool, try func() (sandbox.Sandbox, error)) (sandbox.Sandbox, error) {
	if lacks.Load() {
		return nil, nil
	}
	sb, err := try()
	if errors.Is(err, ErrUnsupported) {
		lacks.Store(true)
		return nil, nil
	}
	return sb, err
}
