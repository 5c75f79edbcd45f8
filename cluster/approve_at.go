package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/flow"
	"github.com/openrath/rath/session"
)

// ApproveAt is Approve for the approval a run waits for at head: the head
// of its paused session (Run.Output) when the verdict was asked for. If
// the run waits at another head — it moved on to a later approval — the
// verdict is refused with an error wrapping ErrNotWaiting, so that a
// verdict meant for one approval never lands on the next. An empty head
// settles whichever approval the run waits for.
func (c *Cluster) ApproveAt(ctx context.Context, id session.ID, head session.ChunkID, approve bool, by, reason string) error {
	st := c.rt.Store
	run, err := loadRun(ctx, st, id)
	if err != nil {
		return err
	}
	if run.State != StateWaitingApproval {
		return fmt.Errorf("%w: %s is %s, not waiting for approval", ErrNotWaiting, id, run.State)
	}
	paused, err := st.Load(ctx, run.Output)
	if err != nil {
		return fmt.Errorf("cluster: approve %s: the paused session: %w", id, err)
	}
	if head != "" && paused.Head() != head {
		return fmt.Errorf("%w: %s waits for approval at %s, not at %s (the approval that verdict was meant for is settled)",
			ErrNotWaiting, id, paused.Head().Short(), head.Short())
	}
	decided, err := flow.Decide(paused, approve, by, reason)
	if err != nil {
		// Not a gate: an agent's tool calls waiting for approval.
		var aerr error
		if decided, aerr = agent.Decide(paused, agent.Verdict{Approve: approve, By: by, Reason: reason}); aerr != nil {
			return fmt.Errorf("cluster: approve %s: %w", id, errors.Join(err, aerr))
		}
	}
	return c.continueWith(ctx, run, decided, paused.Head())
}
