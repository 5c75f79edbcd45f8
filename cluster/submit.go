package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
)

// SubmitOptions describe a run to submit.
type SubmitOptions struct {
	// Input is the run's input text; nil for the workflow's own input.
	Input *string
	// Needs select the workers that may take the run (gpu=1,
	// sandbox=docker, provider=openai, region=eu...).
	Needs map[string]string
}

// ErrNoInput: input was given to a workflow that takes none.
var ErrNoInput = fmt.Errorf("cluster: the workflow takes no input")

// Submit commits the input of a run of the registered workflow name, routes
// it to a pool of live workers that admits it — recorded as a decision
// chunk on the input — and enqueues it. It returns the run's id (its input
// session's) at once. A run no live worker admits is kept as unroutable and
// routed when such a worker appears.
func (c *Cluster) Submit(ctx context.Context, name string, o SubmitOptions) (session.ID, error) {
	w, err := rath.LookupWorkflow(name)
	if err != nil {
		return "", err
	}
	bctx := ctx
	if o.Input != nil {
		if !w.TakesInput {
			return "", fmt.Errorf("%w: %s (submit it without --input)", ErrNoInput, name)
		}
		bctx = rath.WithInput(ctx, *o.Input)
	}
	_, in, err := w.Build(bctx, c.rt)
	if err != nil {
		return "", fmt.Errorf("cluster: build %s: %w", name, err)
	}
	live, err := c.live(ctx, &c.cache)
	if err != nil {
		return "", fmt.Errorf("cluster: submit %s: %w", name, err)
	}
	r := decide(poolsOf(live), name, "", o.Needs)
	in = in.Append(r.chunk("cluster.route"))
	run := &Run{ID: in.ID(), Workflow: name, Needs: o.Needs, Input: o.Input, Pool: r.Queue, Why: r.Reason, State: StateQueued, Since: time.Now().UTC()}
	if c.pg != nil && r.Queue != "" {
		// The input, its record and its job in one transaction: no run is
		// ever queued without a job, nor a job without its run.
		labels, err := run.labels(LabelKind, "run", rath.WorkflowLabel, name)
		if err != nil {
			return "", err
		}
		if _, err := commitAndEnqueuePG(ctx, c.q, c.pg, commitJob{s: in, run: string(run.ID), queue: r.Queue, labels: labels}); err != nil {
			return "", fmt.Errorf("cluster: submit %s: %w", name, err)
		}
		return run.ID, nil
	}
	if err := c.rt.Store.Commit(ctx, in, ""); err != nil {
		return "", fmt.Errorf("cluster: submit %s: %w", name, err)
	}
	if r.Queue == "" {
		run.State = StateUnroutable
	}
	if err := run.save(ctx, c.rt.Store, LabelKind, "run", rath.WorkflowLabel, name); err != nil {
		return "", err
	}
	if r.Queue != "" {
		if _, err := c.enqueue(ctx, run.ID, r.Queue); err != nil {
			return run.ID, err
		}
	}
	return run.ID, nil
}

// enqueue inserts the run's job and notes its id on the run.
func (c *Cluster) enqueue(ctx context.Context, run session.ID, queue string) (int64, error) {
	id, err := c.q.insert(ctx, string(run), queue)
	if err != nil {
		return 0, err
	}
	return id, c.setJob(ctx, run, id)
}

// LabelJob holds the id of a run's current River job.
const LabelJob = "rath.cluster.job"

func (c *Cluster) setJob(ctx context.Context, run session.ID, id int64) error {
	return c.rt.Store.SetLabel(ctx, run, LabelJob, fmt.Sprint(id))
}
