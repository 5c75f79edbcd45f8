package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/riverqueue/river"

	"github.com/openrath/rath/session"
)

// JobsOfRun describes every River job whose arguments name run id, in
// any state: a failing test's account of where a run's work went.
func (c *Cluster) JobsOfRun(ctx context.Context, id session.ID) string {
	var sb strings.Builder
	p := river.NewJobListParams().First(1000)
	for {
		res, err := c.q.jobs(ctx, p)
		if err != nil {
			return fmt.Sprintf("jobs: %v", err)
		}
		for _, j := range res.Jobs {
			if !strings.Contains(string(j.EncodedArgs), string(id)) {
				continue
			}
			fmt.Fprintf(&sb, "job %d %s queue %s state %s attempt %d by %v at %v scheduled %v finalized %v args %s\n",
				j.ID, j.Kind, j.Queue, j.State, j.Attempt, j.AttemptedBy, j.AttemptedAt, j.ScheduledAt, j.FinalizedAt, j.EncodedArgs)
			for _, e := range j.Errors {
				fmt.Fprintf(&sb, "  error (attempt %d, %v): %s\n", e.Attempt, e.At, e.Error)
			}
		}
		if len(res.Jobs) < 1000 || res.LastCursor == nil {
			break
		}
		p = p.After(res.LastCursor)
	}
	if sb.Len() == 0 {
		return "no job names the run"
	}
	return sb.String()
}
