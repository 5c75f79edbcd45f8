package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// RunItem is a run's record with the time it was submitted (its input
// session's creation), the order runs are listed in.
type RunItem struct {
	Run
	Created time.Time `json:"created"`
}

// RunFilter selects the runs ListRuns returns.
type RunFilter struct {
	// State keeps the runs in one stored state (every state but
	// cancelling, which is a request on a run in another state; all if
	// empty).
	State State
	// Workflow keeps the runs of one registered workflow.
	Workflow string
	// Since and Until bound the submission time: [Since, Until).
	Since, Until time.Time
	// Limit caps the runs (0: all).
	Limit int
	// Scope, if set, keeps the runs of one tenant (and project).
	Scope *store.Scope
}

// ErrBadFilter: a run filter asks for something runs are not listed by.
var ErrBadFilter = errors.New("cluster: bad run filter")

// ListRuns lists the runs f selects, newest first (by submission time,
// ties in the store's fixed order), each as Status shows it: a run whose
// cancel was asked for and has not ended is cancelling. It reads the runs'
// records only, not their sessions.
func (c *Cluster) ListRuns(ctx context.Context, f RunFilter) ([]RunItem, error) {
	sf := store.Filter{Labels: map[string]string{LabelKind: "run"}, Since: f.Since, Until: f.Until, Limit: f.Limit, Scope: f.Scope}
	switch {
	case f.State == StateCancelling:
		return nil, fmt.Errorf("%w: cancelling is not a stored state (a cancel is asked of a run in another state); list running runs instead", ErrBadFilter)
	case f.State != "" && !slices.Contains(states, f.State):
		return nil, fmt.Errorf("%w: unknown state %q (want one of %s)", ErrBadFilter, f.State, stateNames())
	case f.State != "":
		sf.Labels[LabelState] = string(f.State)
	}
	if f.Workflow != "" {
		sf.Labels[rath.WorkflowLabel] = f.Workflow
	}
	infos, err := c.rt.Store.List(ctx, sf)
	if err != nil {
		return nil, err
	}
	items := make([]RunItem, 0, len(infos))
	for _, info := range infos {
		r, err := runOf(info)
		if err != nil {
			continue // a record that does not decode is not listed; RunStatus names its fault
		}
		items = append(items, RunItem{Run: *overlayCancel(info, r), Created: info.Created})
	}
	return items, nil
}

// RunInfo is one run's record, as ListRuns shows it, without reading its
// sessions (RunStatus adds the ledger's history).
func (c *Cluster) RunInfo(ctx context.Context, id session.ID) (*RunItem, error) {
	info, err := c.rt.Store.Info(ctx, id)
	if err != nil {
		return nil, err
	}
	r, err := runOf(info)
	if err != nil {
		return nil, err
	}
	return &RunItem{Run: *overlayCancel(info, r), Created: info.Created}, nil
}

// overlayCancel shows a run whose cancel was asked for and that has not
// ended as cancelling, with who asked.
func overlayCancel(info store.Info, r *Run) *Run {
	if info.Labels[LabelCancel] == "requested" && !r.State.Final() {
		r.State, r.Cancel = StateCancelling, info.Labels[LabelCancelBy]
	}
	return r
}

// states are the stored states of a run.
var states = []State{StateQueued, StateUnroutable, StateBehind, StateRunning, StateWaitingApproval, StateNeedsReview, StateCancelled, StateFailed, StateDone}

func stateNames() string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Workers lists the workers that have not ended, each with whether it is
// alive (and why not), then the latest that ended.
func (c *Cluster) Workers(ctx context.Context) ([]WorkerInfo, error) {
	ws, err := c.workers(ctx)
	if err != nil {
		return nil, err
	}
	ended, err := c.recentlyEnded(ctx)
	if err != nil {
		return nil, err
	}
	return append(ws, ended...), nil
}

// Queues lists the pools of live workers, and the pools that runs wait in
// with no live worker (among the newest poolScan runs of each state), each
// with its queued and running runs counted.
func (c *Cluster) Queues(ctx context.Context) ([]PoolStatus, error) {
	ws, err := c.workers(ctx)
	if err != nil {
		return nil, err
	}
	pools := livePools(ws)
	for _, st := range []State{StateQueued, StateRunning} {
		infos, err := c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{LabelKind: "run", LabelState: string(st)}, Limit: poolScan})
		if err != nil {
			return nil, err
		}
		for _, info := range infos {
			if q := info.Labels[LabelPool]; q != "" && pools[q] == nil {
				pools[q] = &PoolStatus{Queue: q}
			}
		}
	}
	return sortedPools(ctx, c, pools)
}

// poolScan bounds the runs of each state Queues reads for the pools that
// have runs but no live worker (the newest): a pool whose waiting runs are
// all older than that many others is left out until they are fewer.
const poolScan = 1000

// livePools are the pools of the live workers among ws.
func livePools(ws []WorkerInfo) map[string]*PoolStatus {
	var live []WorkerInfo
	for _, w := range ws {
		if w.Alive && w.State != workerStopped {
			live = append(live, w)
		}
	}
	pools := map[string]*PoolStatus{}
	for _, p := range poolsOf(live) {
		pools[p.Queue] = &PoolStatus{Queue: p.Queue, Offers: p.Offers, Serves: p.Serves, Workers: p.Workers}
	}
	return pools
}

// sortedPools counts the pools' runs and returns them by queue name.
func sortedPools(ctx context.Context, c *Cluster, pools map[string]*PoolStatus) ([]PoolStatus, error) {
	if err := c.depths(ctx, pools); err != nil {
		return nil, err
	}
	out := make([]PoolStatus, 0, len(pools))
	for _, p := range pools {
		if p.Workers == nil {
			p.Workers = []string{}
		}
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b PoolStatus) int { return strings.Compare(a.Queue, b.Queue) })
	return out, nil
}

// PendingApproval is a run waiting for a person's verdict: the session it
// paused with, that session's head (a verdict for this approval names it,
// so it cannot land on a later one), and what is asked.
type PendingApproval struct {
	Run      session.ID      `json:"run"`
	Workflow string          `json:"workflow"`
	Since    time.Time       `json:"since"`
	Created  time.Time       `json:"created"`
	Session  session.ID      `json:"session"`
	Head     session.ChunkID `json:"head"`
	// Asks are the subjects of the requests waiting for the verdict (a
	// gate's subject, or "tool call NAME" for each call an agent waits to
	// make).
	Asks []string `json:"asks"`
}

// askTail is how many of a paused session's last chunks are read for its
// requests.
const askTail = 64

// Approvals lists the runs waiting for approval that f selects (its
// state is taken as waiting_approval), newest first, as ListRuns does.
func (c *Cluster) Approvals(ctx context.Context, f RunFilter) ([]PendingApproval, error) {
	f.State = StateWaitingApproval
	runs, err := c.ListRuns(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]PendingApproval, 0, len(runs))
	for _, r := range runs {
		p := PendingApproval{Run: r.ID, Workflow: r.Workflow, Since: r.Since, Created: r.Created, Session: r.Output, Asks: []string{}}
		if r.Output != "" {
			tail, err := c.rt.Store.Tail(ctx, r.Output, askTail)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			if len(tail) > 0 {
				p.Head = tail[len(tail)-1].ID
			}
			p.Asks = asks(tail)
		}
		out = append(out, p)
	}
	return out, nil
}

// asks are the subjects of the approval requests at the end of chunks.
func asks(chunks []session.Chunk) []string {
	out := []string{}
	for i := len(chunks) - 1; i >= 0; i-- {
		a := chunks[i].Approval
		if a == nil || a.Verdict != session.VerdictRequested {
			break
		}
		out = append(out, a.Subject)
	}
	slices.Reverse(out)
	return out
}

// Queued counts the runs waiting to be worked: queued, unroutable until a
// worker admits them, or behind an earlier run on their session. (A count each, not a read of the records.)
func (c *Cluster) Queued(ctx context.Context, sc *store.Scope) (int, error) {
	n := 0
	for _, st := range []State{StateQueued, StateUnroutable, StateBehind} {
		k, err := c.rt.Store.Count(ctx, store.Filter{Labels: map[string]string{LabelKind: "run", LabelState: string(st)}, Scope: sc})
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// RunSessions are the sessions of run id, oldest first: its input, its
// ledger, and every session its workflow wrote (its agents' sessions, its
// branches, its output — those labelled with the run).
func (c *Cluster) RunSessions(ctx context.Context, id session.ID) ([]session.ID, error) {
	r, err := loadRun(ctx, c.rt.Store, id)
	if err != nil {
		return nil, err
	}
	ids := []session.ID{id}
	if r.Ledger != "" {
		ids = append(ids, r.Ledger)
	}
	infos, err := c.rt.Store.List(ctx, store.Filter{Labels: map[string]string{runctx.Label: string(id)}})
	if err != nil {
		return nil, err
	}
	for _, info := range slices.Backward(infos) {
		if info.ID != id {
			ids = append(ids, info.ID)
		}
	}
	return ids, nil
}

// RunOwner is the run a stored session belongs to: the one its workflow
// run or its ledger label names ("" if none). A run's input is its own.
func RunOwner(info store.Info) session.ID {
	switch {
	case info.Labels[LabelRun] != "":
		return info.ID
	case info.Labels[runctx.Label] != "":
		return session.ID(info.Labels[runctx.Label])
	}
	return session.ID(info.Labels[LabelLedger])
}
