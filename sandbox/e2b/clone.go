package e2b

import (
	"context"
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
	if b.provider == E2B {
		sb, err := remote.Offered(&b.noFork, func() (sandbox.Sandbox, error) {
			sb, err := a.fork(ctx, src.ID())
			if err != nil {
				return nil, err
			}
			return b.open(ctx, a, sb, src.Spec(), template, "")
		})
		if sb != nil || err != nil {
			return sb, wrapErr(err, "%s: forking sandbox %s", b.provider, src.ID())
		}
		sb, err = remote.Offered(&b.noSnapshot, func() (sandbox.Sandbox, error) {
			snap, err := a.snapshot(ctx, src.ID())
			if err != nil {
				return nil, err
			}
			return b.create(ctx, a, spec, snap)
		})
		if sb != nil || err != nil {
			return sb, wrapErr(err, "%s: snapshotting sandbox %s", b.provider, src.ID())
		}
	}
	return remote.CloneByCopy(ctx, src, func(ctx context.Context) (*remote.Sandbox, error) { return b.create(ctx, a, spec, "") }, a.kill)
}

// wrapErr says what failed, or is nil.
func wrapErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
