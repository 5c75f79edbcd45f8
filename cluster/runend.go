package cluster

import (
	"context"
	"fmt"

	"github.com/openrath/rath/internal/runend"
	"github.com/openrath/rath/store"
)

// endSessions ends a run about to end in state `to`, and its sessions:
// those its agents and modules committed that are still open, active or
// paused, and its input, move to closed when it is done, to failed when it
// failed or was cancelled (a cancelled run did not finish its work, and it
// may be resumed: failed sessions stay the record it resumes from, and
// Resume makes its input active again; closed would say they were
// finished). The run's steps are recorded on it. ctx carries the run's
// fence: a worker that lost the run ends nothing (store.ErrFenced). It
// runs before the run's state moves, so whoever sees the run ended sees
// its sessions ended.
func (c *Cluster) endSessions(ctx context.Context, run *Run, to State) error {
	status := store.StatusFailed
	if to == StateDone {
		status = store.StatusClosed
	}
	if _, err := runend.End(ctx, c.rt.Store, run.ID, status); err != nil {
		return err
	}
	if err := store.MoveTo(ctx, c.rt.Store, run.ID, status); err != nil {
		return fmt.Errorf("cluster: run %s: %w", run.ID, err)
	}
	return nil
}
