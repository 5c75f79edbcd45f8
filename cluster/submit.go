package cluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// SubmitOptions describe a run to submit.
type SubmitOptions struct {
	// Input is the run's input text; nil for the workflow's own input.
	Input *string
	// Needs select the workers that may take the run (gpu=1,
	// sandbox=docker, provider=openai, region=eu...).
	Needs map[string]string
	// Key is the client's idempotency key ("": none): see SubmitKeyed.
	Key string
	// Tenant and Project are the scope the run belongs to ("":
	// DefaultTenant, store.DefaultScope): its sessions are born in it, its
	// idempotency key is among its scope's, it counts toward its scope's
	// quotas. A name store.CheckScopeName refuses (".", "..") is an
	// error wrapping store.ErrBadScope.
	Tenant, Project string
	// Session, if set, is a stored session the run continues: its input
	// is a fork of it carrying what the session's earlier runs added, and
	// it waits behind any of them still going (see thread.go).
	Session session.ID
}

// ErrNoInput: input was given to a workflow that takes none.
var ErrNoInput = fmt.Errorf("cluster: the workflow takes no input")

// Submit commits the input of a run of the registered workflow name, routes
// it to a pool of live workers that admits it — recorded as a decision
// chunk on the input — and enqueues it. It returns the run's id (its input
// session's) at once. A run no live worker admits is kept as unroutable and
// routed when such a worker appears. With o.Key set, Submit is SubmitKeyed
// (the id of a replayed run is returned as that of a new one).
func (c *Cluster) Submit(ctx context.Context, name string, o SubmitOptions) (session.ID, error) {
	if o.Key != "" {
		id, _, err := c.SubmitKeyed(ctx, name, o)
		return id, err
	}
	p, err := c.prepare(ctx, name, o)
	if err != nil {
		return "", err
	}
	return c.submitPrepared(ctx, p)
}

// submitPrepared submits a prepared run: one on a session through
// submitOnSession (it may wait behind another), any other now.
func (c *Cluster) submitPrepared(ctx context.Context, p *prepared) (session.ID, error) {
	if p.run.Session != "" {
		return c.submitOnSession(ctx, p)
	}
	return c.submitNow(ctx, p)
}

// submitNow submits a prepared run that goes now: on PostgreSQL, one
// routed to a pool in one transaction; else one write after another
// (submitOne).
func (c *Cluster) submitNow(ctx context.Context, p *prepared) (session.ID, error) {
	name := p.run.Workflow
	if c.pg != nil && p.queue != "" {
		// The input, its record and its job in one transaction: no run is
		// ever queued without a job, nor a job without its run.
		if err := submitPG(ctx, c.q, c.pg, []*prepared{p}); err != nil {
			return "", fmt.Errorf("cluster: submit %s: %w", name, err)
		}
		c.runEvent(ctx, p.run)
		return p.run.ID, nil
	}
	return c.submitOne(ctx, p)
}

// submitBatch bounds the runs SubmitMany commits in one transaction.
const submitBatch = 256

// SubmitMany submits a run of the registered workflow name for each of
// runs, as Submit does, and returns their ids in order. On PostgreSQL the
// runs routed to a pool are committed and enqueued together, up to
// submitBatch in one transaction (their inputs, records and jobs); runs no
// live worker admits, runs on a session, and every run on SQLite, go one
// by one. On an error
// the ids of the runs submitted so far are returned with it. It takes no
// idempotency keys: submit keyed runs with SubmitKeyed.
func (c *Cluster) SubmitMany(ctx context.Context, name string, runs []SubmitOptions) ([]session.ID, error) {
	for i, o := range runs {
		if o.Key != "" {
			return nil, fmt.Errorf("cluster: SubmitMany takes no idempotency keys (run %d has one); use SubmitKeyed", i)
		}
	}
	ids := make([]session.ID, 0, len(runs))
	for chunk := range slices.Chunk(runs, submitBatch) {
		var batch []*prepared
		for _, o := range chunk {
			p, err := c.prepare(ctx, name, o)
			if err != nil {
				return ids, err
			}
			batch = append(batch, p)
		}
		var routed []*prepared
		for _, p := range batch {
			if c.pg == nil || p.queue == "" || p.run.Session != "" {
				if _, err := c.submitPrepared(ctx, p); err != nil {
					return ids, err
				}
				continue
			}
			routed = append(routed, p)
		}
		if len(routed) > 0 {
			if err := submitPG(ctx, c.q, c.pg, routed); err != nil {
				return ids, fmt.Errorf("cluster: submit %s: %w", name, err)
			}
			c.runEvents(ctx, routed)
		}
		for _, p := range batch {
			ids = append(ids, p.run.ID)
		}
	}
	return ids, nil
}

// prepared is a run ready to submit: its input with the routing decision
// appended, its record, the labels that hold it, and its pool's queue (""
// when no live worker admits it). The input of a run on a session is the
// bare fork of it: submitOnSession carries the session's earlier runs and
// appends the routing decision (route) once it knows the run goes now.
type prepared struct {
	in     *session.Session
	run    *Run
	labels map[string]string
	queue  string
	route  routing
	also   []string // the labels beside the record's (key, value, ...)
}

// scope is the scope the run's sessions are born in.
func (p *prepared) scope() store.Scope {
	return store.Scope{Tenant: p.run.Tenant, Project: p.run.Project}
}

// scopeOf is the scope a submission names, with defaults.
func scopeOf(o SubmitOptions) store.Scope {
	return store.ScopeOf(store.Scope{Tenant: o.Tenant, Project: o.Project}.Labels())
}

// prepare builds a run's input, routes it, and makes its record, and the
// labels that hold it with any others given (key, value, ...).
func (c *Cluster) prepare(ctx context.Context, name string, o SubmitOptions, also ...string) (*prepared, error) {
	if err := (store.Scope{Tenant: o.Tenant, Project: o.Project}).Check(); err != nil {
		return nil, fmt.Errorf("cluster: submit %s: %w", name, err)
	}
	w, err := rath.LookupWorkflow(name)
	if err != nil {
		return nil, err
	}
	if err := CheckNeeds(o.Needs); err != nil {
		return nil, err
	}
	if err := c.admit(ctx, scopeOf(o), name); err != nil {
		return nil, err
	}
	bctx := ctx
	if o.Input != nil {
		if !w.TakesInput {
			return nil, fmt.Errorf("%w: %s (submit it without --input)", ErrNoInput, name)
		}
		bctx = rath.WithInput(ctx, *o.Input)
	}
	_, in, err := w.Build(bctx, c.rt)
	if err != nil {
		return nil, fmt.Errorf("cluster: build %s: %w", name, err)
	}
	if o.Session != "" {
		if info, err := c.rt.Store.Info(ctx, o.Session); err == nil && !scopeOf(o).Covers(store.ScopeOf(info.Labels)) {
			return nil, fmt.Errorf("cluster: session %s: %w", o.Session, store.ErrNotFound)
		}
		if in, err = c.forkSession(ctx, o.Session, in); err != nil {
			return nil, err
		}
		also = append([]string{LabelSession, string(o.Session)}, also...)
	}
	live, err := c.live(ctx, &c.cache)
	if err != nil {
		return nil, fmt.Errorf("cluster: submit %s: %w", name, err)
	}
	r := decide(poolsOf(live), name, "", o.Needs)
	if o.Session == "" {
		in = in.Append(r.chunk("cluster.route"))
	}
	sc := scopeOf(o)
	run := &Run{ID: in.ID(), Workflow: name, Needs: o.Needs, Input: o.Input, Session: o.Session, Pool: r.Queue, Why: r.Reason, State: StateQueued, Since: time.Now().UTC(),
		Tenant: sc.Tenant, Project: sc.Project}
	if r.Queue == "" {
		run.State = StateUnroutable
	}
	also = append([]string{LabelKind, "run", rath.WorkflowLabel, name, store.LabelTenant, sc.Tenant, store.LabelProject, sc.Project}, also...)
	labels, err := run.labels(also...)
	if err != nil {
		return nil, err
	}
	return &prepared{in: in, run: run, labels: labels, queue: r.Queue, route: r, also: also}, nil
}

// submitOne commits a prepared run, its record, and (if it was routed)
// its job, one after another.
func (c *Cluster) submitOne(ctx context.Context, p *prepared) (session.ID, error) {
	if err := c.rt.Store.Commit(store.WithCreateScope(ctx, p.scope()), p.in, ""); err != nil {
		return "", fmt.Errorf("cluster: submit %s: %w", p.run.Workflow, err)
	}
	if err := c.rt.Store.SetLabels(ctx, p.run.ID, p.labels); err != nil {
		return "", fmt.Errorf("cluster: run %s: %w", p.run.ID, err)
	}
	c.runEvent(ctx, p.run)
	if p.queue != "" {
		if _, err := c.enqueue(ctx, p.run.ID, p.queue); err != nil {
			return p.run.ID, err
		}
	}
	return p.run.ID, nil
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
