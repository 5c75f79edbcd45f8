package rath

import (
	"context"

	"github.com/openrath/rath/internal/runend"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// endSessions ends the sessions of run, which ended in status (closed or
// failed): those its agents and modules committed that are still open,
// active or paused move to status, and the number of model calls the run
// made is recorded on it (runctx.StepsLabel), for rath ls. ctx carries the
// run's fence. A run stopped to be resumed later is not ended: its
// sessions stay the record it resumes from.
func (r *Runtime) endSessions(ctx context.Context, run session.ID, status store.Status) error {
	_, err := runend.End(ctx, r.Store, run, status)
	return err
}
