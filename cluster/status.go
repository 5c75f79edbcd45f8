package cluster

import (
	"context"
	"slices"
	"strings"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Report is the cluster's state as the store has it.
type Report struct {
	Workers []WorkerInfo `json:"workers"`
	Pools   []PoolStatus `json:"pools"`
	Runs    []Run        `json:"runs"`
}

// PoolStatus is one pool: its live workers and how many runs wait in its
// queue or run.
type PoolStatus struct {
	Queue   string            `json:"queue"`
	Offers  map[string]string `json:"offers,omitempty"`
	Serves  []string          `json:"serves,omitempty"`
	Workers []string          `json:"workers"`
	Queued  int               `json:"queued"`
	Running int               `json:"running"`
}

// StatusOptions filter a report's runs.
type StatusOptions struct {
	// States keeps runs in these states (all if empty).
	States []State
	// Limit caps the runs (newest first; 0: all).
	Limit int
}

// Status reports the workers (alive or not: dead ones say why; of those
// that ended, the latest endedShown), the pools (those with live workers,
// and those of the runs reported)
// with their queue depths, and the runs, each with its state; a queued
// run whose pool has no live worker says so (a revision no live worker
// serves, or no worker at all), as does a run pinned to its host.
func (c *Cluster) Status(ctx context.Context, o StatusOptions) (*Report, error) {
	ws, err := c.Workers(ctx)
	if err != nil {
		return nil, err
	}
	rep := &Report{Workers: ws}
	pools := livePools(ws) // the ended ones are not alive
	f := store.Filter{Labels: map[string]string{LabelKind: "run"}, Limit: o.Limit}
	if len(o.States) == 1 {
		f.Labels[LabelState] = string(o.States[0])
	}
	infos, err := c.rt.Store.List(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, info := range infos {
		r, err := runOf(info)
		if err != nil {
			continue
		}
		if len(o.States) > 0 && !slices.Contains(o.States, r.State) {
			continue
		}
		r = overlayCancel(info, r)
		if r.State == StateQueued {
			if p := pools[r.Pool]; p == nil || len(p.Workers) == 0 {
				what := "workflow " + r.Workflow
				if r.Revision != "" {
					what = "revision " + r.Revision
				}
				r.Why = "waiting: no live worker in pool " + r.Pool + " serves " + what
			}
		}
		rep.Runs = append(rep.Runs, *r)
		if r.Pool != "" && pools[r.Pool] == nil && !r.State.Final() {
			pools[r.Pool] = &PoolStatus{Queue: r.Pool}
		}
	}
	if rep.Pools, err = sortedPools(ctx, c, pools); err != nil {
		return nil, err
	}
	return rep, nil
}

// RunStatus returns one run's record and its ledger's decisions and notes:
// where it went and why.
func (c *Cluster) RunStatus(ctx context.Context, id session.ID) (*Run, []session.Chunk, error) {
	info, err := c.rt.Store.Info(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	r, err := runOf(info)
	if err != nil {
		return nil, nil, err
	}
	r = overlayCancel(info, r)
	if r.State == StateNeedsReview {
		// Whether a worker that ran the unsettled calls may still exist.
		if r.Previous, err = c.holders(ctx, r.Displaced); err != nil {
			return nil, nil, err
		}
	}
	var history []session.Chunk
	in, err := c.rt.Store.Load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	for _, ch := range in.All() {
		if ch.Decision != nil && strings.HasPrefix(ch.Decision.Selector, "cluster.") {
			history = append(history, ch)
		}
	}
	if r.Ledger != "" {
		l, err := c.rt.Store.Load(ctx, r.Ledger)
		if err != nil {
			return nil, nil, err
		}
		for i, ch := range l.All() {
			if i > 0 {
				history = append(history, ch)
			}
		}
	}
	return r, history, nil
}

// Pending lists the runs waiting for a person: an approval or a review.
func (c *Cluster) Pending(ctx context.Context) ([]Run, error) {
	rep, err := c.Status(ctx, StatusOptions{States: []State{StateWaitingApproval, StateNeedsReview}})
	if err != nil {
		return nil, err
	}
	return rep.Runs, nil
}

// depths counts the queued and running runs of each pool in pools (all
// of them, whatever a report's limit), by their labels: a count each, not
// a read of every record.
func (c *Cluster) depths(ctx context.Context, pools map[string]*PoolStatus) error {
	for q, p := range pools {
		if q == "" {
			continue
		}
		for _, st := range []State{StateQueued, StateRunning} {
			n, err := c.rt.Store.Count(ctx, store.Filter{Labels: map[string]string{LabelKind: "run", LabelPool: q, LabelState: string(st)}})
			if err != nil {
				return err
			}
			if st == StateQueued {
				p.Queued = n
			} else {
				p.Running = n
			}
		}
	}
	return nil
}
