package e2b

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
)

// clone gives src's workspace to a new sandbox: the deployment's fork
// where it has one, else a snapshot and a sandbox created from it, else a
// new sandbox and a copy of the workspace (Cube has neither).
func (b *Backend) clone(ctx context.Context, a *api, src *remote.Sandbox) (sandbox.Sandbox, error) {
	spec := src.Spec()
	template := src.Remote().Template
	if spec.Image == "" {
		spec.Image = template
	}
	if b.provider == E2B && !b.noFork.Load() {
		sb, err := a.fork(ctx, src.ID())
		if err == nil {
			return b.open(ctx, a, sb, src.Spec(), template, "")
		}
		if !errors.Is(err, errUnsupported) {
			return nil, fmt.Errorf("%s: forking sandbox %s: %w", b.provider, src.ID(), err)
		}
		b.noFork.Store(true)
	}
	if b.provider == E2B && !b.noSnapshot.Load() {
		snap, err := a.snapshot(ctx, src.ID())
		if err == nil {
			return b.create(ctx, a, spec, snap)
		}
		if !errors.Is(err, errUnsupported) {
			return nil, fmt.Errorf("%s: snapshotting sandbox %s: %w", b.provider, src.ID(), err)
		}
		b.noSnapshot.Store(true)
	}
	dst, err := b.create(ctx, a, spec, "")
	if err != nil {
		return nil, err
	}
	if err := remote.CopyTo(ctx, src, dst); err != nil {
		_ = a.kill(context.WithoutCancel(ctx), dst.ID())
		return nil, err
	}
	return dst, nil
}
