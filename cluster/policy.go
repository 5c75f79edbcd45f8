package cluster

import (
	"context"
)

// withPolicy returns ctx deciding a run's actions by the runtime's
// policies (rath.Config.Policies): the file of the run's tenant and
// project, chosen by its scope (runctx.Scope), which ctx carries already.
// The command line's runtime observes every decision into the audit log.
func (c *Cluster) withPolicy(ctx context.Context) context.Context {
	return c.rt.WithPolicy(ctx)
}
