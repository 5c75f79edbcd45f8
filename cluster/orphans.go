package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// handOnOrphans replaces the running jobs no live worker is working: those
// whose last attempt a River client made that no live (or draining)
// worker record names, made longer than DeadAfter ago.
//
// reap hands on the jobs of a worker it finds dead, but a worker taken
// for dead while it was paused may wake up and, before its next heartbeat
// tells it that it is dead, fetch one more job and take its run; killed
// then, it leaves a job running under a client whose record is already
// dead, which no reap would look at again (River's own rescue comes after
// an hour). This sweep finds such jobs whatever left them.
//
// The jobs are read before the workers: a worker registers its record
// before its River client fetches a job, so every client that made an
// attempt read here is named by a record read after, unless it is gone.
func (c *Cluster) handOnOrphans(ctx context.Context, me WorkerInfo) error {
	jobs, err := c.q.running(ctx)
	if err != nil || len(jobs) == 0 {
		return err
	}
	ws, err := c.workers(ctx)
	if err != nil {
		return err
	}
	live := map[string]bool{me.client(): true}
	for _, w := range ws {
		if w.State == workerAlive || w.State == workerDraining {
			live[w.client()] = true
		}
	}
	before := time.Now().Add(-c.opts.DeadAfter)
	var orphans []*rivertype.JobRow
	for _, j := range jobs {
		n := len(j.AttemptedBy)
		if n == 0 || live[j.AttemptedBy[n-1]] || j.AttemptedAt == nil || j.AttemptedAt.After(before) {
			continue
		}
		orphans = append(orphans, j)
	}
	if len(orphans) == 0 {
		return nil
	}
	why := fmt.Sprintf("no live worker works it (the River client of its last attempt is gone); handed on by %s", me.ID)
	ids, err := c.q.replace(ctx, orphans, "", why)
	if err != nil {
		return err
	}
	if err := c.setJobs(ctx, ids); err != nil {
		return err
	}
	if len(ids) > 0 {
		c.log.Warn("jobs without a live worker; handed on", "worker", me.ID, "jobs", len(orphans), "new", ids)
	}
	return nil
}
