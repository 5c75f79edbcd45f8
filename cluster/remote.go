package cluster

import (
	"context"
	"maps"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// LabelRemotePrefix starts a label of a run's session naming a remote
// sandbox created for the run: the key ends with the sandbox id, the value
// is its backend.
const LabelRemotePrefix = "rath.cluster.remote."

// keepRemote makes the worker's sandbox pool leave the remote sandboxes it
// creates running when the worker stops (their runs go on on other
// workers), and records each on its run, whose end releases it.
func (c *Cluster) keepRemote() {
	pool := c.rt.Sandboxes
	pool.KeepRemote()
	pool.Notify(func(ctx context.Context, backend, id string) {
		run := runctx.ID(ctx)
		if run == "" {
			return
		}
		c.remoteMu.Lock()
		if c.remote == nil {
			c.remote = map[session.ID]map[string]string{}
		}
		if c.remote[run] == nil {
			c.remote[run] = map[string]string{}
		}
		c.remote[run][id] = backend
		c.remoteMu.Unlock()
		if err := c.rt.Store.SetLabel(context.WithoutCancel(ctx), run, LabelRemotePrefix+id, backend); err != nil {
			c.log.Warn("cannot record a remote sandbox on its run", "run", run, "sandbox", id, "err", err)
		}
	})
}

// ended lets go of what a run that ended held: its workspace journals and
// its remote sandboxes; and releases the run waiting behind it on its
// session, if any.
func (c *Cluster) ended(ctx context.Context, run *Run) {
	c.closeJournals(ctx, run)
	c.releaseRemote(ctx, run)
	if err := c.releaseBehind(ctx, run); err != nil {
		// The reroute loop releases it later (releaseStranded).
		c.log.Warn("cannot release the run behind a run that ended", "run", run.ID, "session", run.Session, "err", err)
	}
}

// remoteOf returns a run's remote sandboxes (id -> backend): those
// recorded on it when it was loaded, and those this process created for
// it since. forget drops this process's record of them.
func (c *Cluster) remoteOf(run *Run, forget bool) map[string]string {
	all := maps.Clone(run.remote)
	c.remoteMu.Lock()
	defer c.remoteMu.Unlock()
	if mine := c.remote[run.ID]; len(mine) > 0 {
		if all == nil {
			all = map[string]string{}
		}
		maps.Copy(all, mine)
	}
	if forget {
		delete(c.remote, run.ID)
	}
	return all
}

// parkRemote pauses the remote sandboxes of a run that waits for a person
// (an approval, a review): no worker holds them meanwhile, so their
// lifetimes would run out; paused, they keep their workspaces until the
// run's next slice attaches (and so resumes) them.
func (c *Cluster) parkRemote(ctx context.Context, run *Run) {
	for id, backend := range c.remoteOf(run, false) {
		if err := sandbox.PauseRemote(ctx, backend, id); err != nil {
			c.log.Warn("cannot pause the remote sandbox of a waiting run", "run", run.ID, "sandbox", id, "err", err)
		}
	}
}

// releaseRemote releases the remote sandboxes of a run that ended (killed,
// paused or kept, as their backend is configured).
func (c *Cluster) releaseRemote(ctx context.Context, run *Run) {
	for id, backend := range c.remoteOf(run, true) {
		if err := sandbox.ReleaseRemote(ctx, backend, id); err != nil {
			c.log.Warn("cannot release a remote sandbox", "run", run.ID, "sandbox", id, "err", err)
			continue
		}
		_ = c.rt.Store.SetLabel(ctx, run.ID, LabelRemotePrefix+id, "")
	}
}
