package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Runs is what /v1's runs, approvals, workers and queues need of the Agent
// Cluster; package cli gives an adapter over cluster.Cluster (server cannot
// import it). Errors wrap store.ErrNotFound (404), store.ErrConflict (409),
// ErrInvalid (400), ErrKeyReused (409) or ErrUnsupported (501); any other
// is the server's fault (500).
type Runs interface {
	// Every call is confined to a scope (a tenant and project): the runs,
	// approvals, schedules and webhooks of another scope are not found
	// (store.ErrNotFound) and are left out of lists.

	// Submit starts a run in req's scope, or — when req.Key names a run
	// submitted with the same key and body in that scope — gives that run
	// back (replayed).
	Submit(ctx context.Context, req RunRequest) (v RunView, replayed bool, err error)
	// ListRuns lists the runs q selects, newest first by creation time.
	ListRuns(ctx context.Context, q RunQuery) ([]RunView, error)
	// Run is one run.
	Run(ctx context.Context, sc store.Scope, id session.ID) (RunView, error)
	// Cancel asks for a run to stop.
	Cancel(ctx context.Context, sc store.Scope, id session.ID, by, reason string) error
	// Resume takes a failed or cancelled run back to work from its
	// committed steps.
	Resume(ctx context.Context, sc store.Scope, id session.ID, by, reason string) error
	// Review settles the calls a run in needs_review waits on.
	Review(ctx context.Context, sc store.Scope, id session.ID, req ReviewRequest) error
	// Approvals lists the runs waiting for a verdict, as ListRuns does.
	Approvals(ctx context.Context, q RunQuery) ([]RunView, error)
	// Decide records a verdict on the approval a run waits for.
	Decide(ctx context.Context, sc store.Scope, id session.ID, v Verdict) error
	// Queued counts the runs of a scope waiting to be worked (queued,
	// unroutable or behind another).
	Queued(ctx context.Context, sc store.Scope) (int, error)
	// Workers and Queues are the cluster's workers and pools, as JSON
	// arrays: the cluster's own state, for operators (cluster.read).
	Workers(ctx context.Context) (any, error)
	Queues(ctx context.Context) (any, error)
	// RunSessions are the sessions whose chunks run id's event stream
	// carries, oldest first: its input, its ledger and every session it
	// wrote.
	RunSessions(ctx context.Context, sc store.Scope, id session.ID) ([]session.ID, error)
	// RunOwner is the run a stored session belongs to ("" if none).
	RunOwner(info store.Info) session.ID
	// Schedules lists the schedules, by name (a JSON array).
	Schedules(ctx context.Context, sc store.Scope) (any, error)
	// AddSchedule adds one; PauseSchedule pauses or resumes one;
	// RemoveSchedule removes one. Each returns the schedule as it is now.
	AddSchedule(ctx context.Context, sc store.Scope, req ScheduleRequest) (any, error)
	PauseSchedule(ctx context.Context, sc store.Scope, name string, paused bool) (any, error)
	RemoveSchedule(ctx context.Context, sc store.Scope, name string) error
	// Webhooks lists the webhooks (no secrets); AddWebhook subscribes a
	// URL to the run events of its scope and returns the webhook with its
	// secret, the only time it is shown; RemoveWebhook unsubscribes one;
	// Deliveries lists one's deliveries, newest first, with their outcomes.
	Webhooks(ctx context.Context, sc store.Scope) (any, error)
	AddWebhook(ctx context.Context, sc store.Scope, req WebhookRequest) (any, error)
	RemoveWebhook(ctx context.Context, sc store.Scope, id session.ID) error
	Deliveries(ctx context.Context, sc store.Scope, id session.ID, limit int) (any, error)
	// Deltas delivers the text run id's models stream, as it comes, until
	// ctx ends (nil: none to deliver). A slow reader loses deltas.
	Deltas(ctx context.Context, sc store.Scope, id session.ID) (<-chan RunDelta, error)
}

// RunDelta is a piece of the text a run's model streams: a run stream's
// "delta" event.
type RunDelta struct {
	Agent string `json:"agent"`
	Step  int    `json:"step"`
	Text  string `json:"text"`
}

// WebhookRequest is the body of POST /v1/webhooks.
type WebhookRequest struct {
	// URL is the absolute http(s) URL deliveries are POSTed to.
	URL string `json:"url"`
	// Events are the run states delivered (all if empty).
	Events []string `json:"events,omitempty"`
	// Secret, if set, is a secret reference (secret://env/NAME,
	// secret://file/PATH) to the key the deliveries are signed with: the
	// store keeps the reference and each worker resolves it as it
	// delivers, within the secret roots the operator grants the caller's
	// scope. Empty: a random secret, in the answer only.
	Secret string `json:"secret,omitempty"`
	// By is the authenticated principal adding it, as the audit log names
	// it: set by the server, never read from the body.
	By string `json:"-"`
}

// ScheduleRequest is the body of POST /v1/schedules.
type ScheduleRequest struct {
	Name     string            `json:"name"`
	Workflow string            `json:"workflow"`
	Cron     string            `json:"cron"`
	Input    *string           `json:"input,omitempty"`
	Needs    map[string]string `json:"needs,omitempty"`
	Paused   bool              `json:"paused,omitempty"`
}

var (
	// ErrInvalid: the request is not one the cluster can act on (an
	// unknown workflow, input to a workflow that takes none, an unknown
	// state).
	ErrInvalid = errors.New("invalid request")
	// ErrKeyReused: an Idempotency-Key was used before with another body.
	ErrKeyReused = errors.New("idempotency key reused with another request")
	// ErrUnsupported: the cluster cannot do this yet.
	ErrUnsupported = errors.New("not supported")
	// ErrExhausted: a quota of the principal's scope is reached (429,
	// reason "quota").
	ErrExhausted = errors.New("quota exhausted")
)

// RunRequest is the body of POST /v1/runs.
type RunRequest struct {
	// Workflow is the registered workflow to run.
	Workflow string `json:"workflow"`
	// Input is the run's input text; absent for the workflow's own.
	Input *string `json:"input,omitempty"`
	// Needs select the workers that may take it (gpu=1, region=eu).
	Needs map[string]string `json:"needs,omitempty"`
	// Session, if set, is a session the run continues.
	Session session.ID `json:"session,omitempty"`
	// Key is the request's Idempotency-Key header ("": none); Scope is
	// the principal's, whose runs it is among.
	Key   string      `json:"-"`
	Scope store.Scope `json:"-"`
}

// RunQuery selects runs to list.
type RunQuery struct {
	// State is one run state (all if empty); Workflow one workflow.
	State, Workflow string
	// Since and Until bound the creation time: [Since, Until).
	Since, Until time.Time
	// Limit caps the runs.
	Limit int
	// Scope is the principal's: only its runs are listed.
	Scope store.Scope
}

// RunView is one run (or pending approval) as the API shows it.
type RunView struct {
	ID session.ID
	// State is the run's state: done, failed and cancelled are final.
	State string
	// Created orders lists (newest first).
	Created time.Time
	// Body is the view as the response carries it (a JSON object).
	Body any
}

// MarshalJSON writes the view's body.
func (v RunView) MarshalJSON() ([]byte, error) { return json.Marshal(v.Body) }

// ReviewRequest is the body of POST /v1/runs/{id}/review: whether the
// effect of the calls a run waits on happened.
type ReviewRequest struct {
	// Verdict is happened, not_happened or aborted.
	Verdict string `json:"verdict"`
	// Result is what a call that happened returned, if known.
	Result string `json:"result,omitempty"`
	// Call settles one call (all alike if empty).
	Call   string `json:"call,omitempty"`
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
	// Force settles not_happened even while a worker that ran the call
	// may still exist (refused otherwise: a conflict).
	Force bool `json:"force,omitempty"`
}

// Verdict is the body of POST /v1/approvals/{id}.
type Verdict struct {
	// Verdict is approve or deny.
	Verdict string `json:"verdict"`
	By      string `json:"by"`
	Reason  string `json:"reason,omitempty"`
	// Head, if set, is the paused session's head the verdict is meant
	// for: a run that has moved on since (to another approval) refuses it.
	Head session.ChunkID `json:"head,omitempty"`
}

// control is the body of POST /v1/runs/{id}/cancel and /resume.
type control struct {
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// final reports whether a run in state st is over.
func final(st string) bool { return st == "done" || st == "failed" || st == "cancelled" }
