package opensandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/sandbox/remote"
)

// snapshotTimeout bounds how long a snapshot may take to become ready.
const snapshotTimeout = 10 * time.Minute

// clone gives src's workspace to a new sandbox: a snapshot and a sandbox
// created from it where the deployment has snapshots (the placement
// records the snapshot, so a resumed fork can be re-created from it),
// else a new sandbox and a copy of the workspace.
func (b *Backend) clone(ctx context.Context, a *api, src *remote.Sandbox) (sandbox.Sandbox, error) {
	spec := src.Spec()
	if spec.Image == "" {
		spec.Image = src.Remote().Template
	}
	sb, err := remote.Offered(&b.noSnapshot, func() (sandbox.Sandbox, error) {
		snap, err := b.snapshot(ctx, a, src.ID())
		if err != nil {
			return nil, err
		}
		return b.create(ctx, a, spec, snap)
	})
	if err != nil {
		return nil, fmt.Errorf("opensandbox: snapshotting sandbox %s: %w", src.ID(), err)
	}
	if sb != nil {
		return sb, nil
	}
	return remote.CloneByCopy(ctx, src, func(ctx context.Context) (*remote.Sandbox, error) { return b.create(ctx, a, spec, "") }, a.kill)
}

// snapshot takes a snapshot of a sandbox and waits until it is ready
// (the API creates it asynchronously).
func (b *Backend) snapshot(ctx context.Context, a *api, id string) (string, error) {
	s, err := a.snapshot(ctx, id)
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(snapshotTimeout)
	for {
		switch s.Status.State {
		case snapReady:
			return s.ID, nil
		case snapFailed:
			return "", fmt.Errorf("snapshot %s failed: %s", s.ID, s.Status)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("snapshot %s was not ready after %s: %s", s.ID, snapshotTimeout, s.Status)
		}
		t := time.NewTimer(a.o.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
		if s, err = a.getSnapshot(ctx, s.ID); err != nil {
			return "", err
		}
	}
}
