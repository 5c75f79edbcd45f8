package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// State is where a run is.
type State string

// The states of a run.
const (
	// Queued: a job waits in its pool's queue.
	StateQueued State = "queued"
	// Unroutable: no live worker offers what the run needs (or serves its
	// revision); the cluster routes it again as workers come.
	StateUnroutable State = "unroutable"
	// Running: a worker holds a slice of it.
	StateRunning State = "running"
	// WaitingApproval: an approval gate waits for a human (Approve).
	StateWaitingApproval State = "waiting_approval"
	// NeedsReview: a call's effect is unknown after its worker died
	// (Review).
	StateNeedsReview State = "needs_review"
	// Cancelling: a cancel was asked for; the worker holding it stops it.
	StateCancelling State = "cancelling"
	// Behind: the run waits for an earlier run on its session to end
	// (Run.Behind).
	StateBehind    State = "behind"
	StateCancelled State = "cancelled"
	StateFailed    State = "failed"
	StateDone      State = "done"
)

// Final reports whether a run in state s is over.
func (s State) Final() bool { return s == StateCancelled || s == StateFailed || s == StateDone }

// Labels the cluster keeps on a run's input session.
const (
	// LabelState holds the run's State (so the store can list by state).
	LabelState = "rath.cluster.state"
	// LabelRun holds the run's Run record as JSON.
	LabelRun = "rath.cluster.run"
	// LabelKind marks the cluster's own sessions: "run", "worker", "ledger".
	LabelKind = "rath.cluster.kind"
	// LabelLedger names, on a ledger session, the run it records.
	LabelLedger = "rath.cluster.ledger"
	// LabelPool holds the queue of the run's pool (so the store can count
	// a pool's runs by state).
	LabelPool = "rath.cluster.pool"
)

// Run is a run's record: what Status reports of it.
type Run struct {
	ID       session.ID        `json:"id"`
	Workflow string            `json:"workflow"`
	State    State             `json:"state"`
	Needs    map[string]string `json:"needs,omitempty"`
	// Input is the input text the run was submitted with, if any: each
	// slice builds the workflow with it.
	Input *string `json:"input,omitempty"`
	// Pool is the queue the run is routed to; Why says why (or why it is
	// unroutable).
	Pool string `json:"pool,omitempty"`
	Why  string `json:"why,omitempty"`
	// Revision is the workflow revision the run started on.
	Revision string `json:"revision,omitempty"`
	// Worker holds the run (running) or last held it, since Since.
	Worker string    `json:"worker,omitempty"`
	Since  time.Time `json:"since"`
	Epoch  int64     `json:"epoch,omitempty"`
	Slices int       `json:"slices,omitempty"`
	Job    int64     `json:"job,omitempty"`
	// Ledger is the session of the run's routing and takeover decisions.
	Ledger session.ID `json:"ledger,omitempty"`
	// Output is the run's output session once it is done (or the paused
	// session waiting for approval).
	Output session.ID `json:"output,omitempty"`
	// Review is the unsettled calls of a run in needs_review.
	Review *agent.Unsettled `json:"review,omitempty"`
	// Holder is the worker process holding the run (running), or that
	// last held it.
	Holder *Holder `json:"holder,omitempty"`
	// Displaced are the holders taken for dead while they held the run,
	// since it last settled (holder.go): a call of theirs may still run.
	Displaced []Holder `json:"displaced,omitempty"`
	// Previous says, of a run in needs_review read by RunStatus, whether
	// each displaced holder may still exist (told as it is read; not
	// stored).
	Previous []HolderState `json:"previous,omitempty"`
	// Pinned says why the run continues on Host.
	Pinned string `json:"pinned,omitempty"`
	Host   string `json:"host,omitempty"`
	// Placed is the sandbox backend its input is placed on; only a
	// host-local one pins the run to Host.
	Placed string `json:"placed,omitempty"`
	Error  string `json:"error,omitempty"`
	// Cancel is who asked for a cancel, and why.
	Cancel string `json:"cancel,omitempty"`
	// Session is the session the run continues, if it was submitted on
	// one; Behind is the earlier run on it the run waits for (behind).
	Session session.ID `json:"session,omitempty"`
	Behind  session.ID `json:"behind,omitempty"`
	// Tenant and Project are the scope the run belongs to (absent on runs
	// submitted before scopes: the default scope's).
	Tenant  string `json:"tenant,omitempty"`
	Project string `json:"project,omitempty"`

	// remote are the remote sandboxes recorded on the run (id -> backend),
	// from its labels.
	remote map[string]string
}

// loadRun reads a run's record from its input session's labels.
func loadRun(ctx context.Context, st store.Store, id session.ID) (*Run, error) {
	info, err := st.Info(ctx, id)
	if err != nil {
		return nil, err
	}
	return runOf(info)
}

// ErrNotARun: a session is not a cluster run's input.
var ErrNotARun = fmt.Errorf("cluster: not a cluster run")

// RunOf reads a run's record from its input session's Info (labels).
func RunOf(info store.Info) (*Run, error) { return runOf(info) }

func runOf(info store.Info) (*Run, error) {
	raw := info.Labels[LabelRun]
	if raw == "" {
		return nil, fmt.Errorf("%w: session %s", ErrNotARun, info.ID)
	}
	var r Run
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("cluster: run %s: its record is malformed: %w", info.ID, err)
	}
	r.State = State(info.Labels[LabelState])
	r.Epoch = info.Epoch
	for k, v := range info.Labels {
		if id, ok := strings.CutPrefix(k, LabelRemotePrefix); ok {
			if r.remote == nil {
				r.remote = map[string]string{}
			}
			r.remote[id] = v
		}
	}
	return &r, nil
}

// save writes the run's record and state (under ctx's fence, if any), with
// any other labels given, in one write.
func (r *Run) save(ctx context.Context, st store.Store, also ...string) error {
	labels, err := r.labels(also...)
	if err != nil {
		return err
	}
	// Watchers (run event streams) wait for a run's state: reported.
	if err := st.SetLabels(store.WithLabelEvents(ctx), r.ID, labels); err != nil {
		return fmt.Errorf("cluster: run %s: %w", r.ID, err)
	}
	return nil
}

// labels are the labels that hold the run's record and state, with any
// other labels given (key, value, ...).
func (r *Run) labels(also ...string) (map[string]string, error) {
	rec := *r
	rec.Previous = nil // told as it is read
	b, err := json.Marshal(&rec)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{LabelRun: string(b), LabelState: string(r.State), LabelPool: r.Pool}
	for i := 0; i+1 < len(also); i += 2 {
		labels[also[i]] = also[i+1]
	}
	return labels, nil
}

// move sets the run's state (and since) and saves it.
func (r *Run) move(ctx context.Context, st store.Store, to State) error {
	r.State, r.Since = to, time.Now().UTC()
	if to.Final() {
		r.Displaced = nil // nothing left to review
	}
	return r.save(ctx, st)
}
