package store

import (
	"context"
	"time"

	"github.com/openrath/rath/session"
)

// Store keeps sessions durably. Implementations are safe for concurrent use
// by many goroutines (and, where the backend allows, many processes).
type Store interface {
	// Commit stores s and moves its head from prev to s.Head(). prev is ""
	// for a session the store has not seen. If the stored head is not prev,
	// Commit fails with ErrConflict and stores nothing — unless the stored
	// head already is s.Head(), in which case the commit happened before and
	// Commit returns nil: retrying a commit is safe.
	//
	// A new session whose lineage names a stored parent shares the parent's
	// chunks up to their common prefix: only its own suffix is written.
	Commit(ctx context.Context, s *session.Session, prev session.ChunkID) error

	// Load returns the whole session.
	Load(ctx context.Context, id session.ID) (*session.Session, error)
	// Tail returns the last n chunks (fewer if the session is shorter),
	// reading only what covers them.
	Tail(ctx context.Context, id session.ID, n int) ([]session.Chunk, error)
	// Range returns chunks [from, to), reading only what covers them.
	Range(ctx context.Context, id session.ID, from, to int) ([]session.Chunk, error)
	// Info returns a session's metadata without its chunks.
	Info(ctx context.Context, id session.ID) (Info, error)
	// List returns sessions matching f, newest first.
	List(ctx context.Context, f Filter) ([]Info, error)
	// Count is how many sessions List would return, without Limit.
	Count(ctx context.Context, f Filter) (int, error)

	// Parents, Children, Ancestors and Descendants query the lineage graph.
	// Ancestors are nearest first; Descendants are breadth first.
	Parents(ctx context.Context, id session.ID) ([]session.ID, error)
	Children(ctx context.Context, id session.ID) ([]session.ID, error)
	Ancestors(ctx context.Context, id session.ID) ([]session.ID, error)
	Descendants(ctx context.Context, id session.ID) ([]session.ID, error)

	// SetStatus moves a session through its lifecycle (see Status).
	SetStatus(ctx context.Context, id session.ID, to Status) error
	// SetLabel sets a label; an empty value removes it.
	SetLabel(ctx context.Context, id session.ID, key, value string) error
	// SetLabels sets several labels at once, in one transaction (an empty
	// value removes its label).
	SetLabels(ctx context.Context, id session.ID, labels map[string]string) error

	// GC deletes sessions last updated before now-olderThan whose status is
	// one of statuses (closed, archived and failed if none are given), and
	// the chunks no remaining session reaches.
	GC(ctx context.Context, olderThan time.Duration, statuses ...Status) (GCStats, error)
	// Verify re-reads a session's stored chain and recomputes every chunk
	// id; it reports the first chunk edited behind the store's back.
	Verify(ctx context.Context, id session.ID) error

	// Advance raises session id's fencing epoch by one and returns the new
	// epoch: whoever works under an earlier one is fenced out (see Fence).
	// Under a context fenced on id itself, Advance is a compare-and-set: it
	// raises the epoch only if it still is the fence's, else fails with
	// ErrFenced and moves nothing — a taker that read the session at an
	// epoch takes it only if nobody took it since (see AdvanceFrom).
	Advance(ctx context.Context, id session.ID) (int64, error)
	// Epoch returns session id's fencing epoch (0 until the first Advance).
	Epoch(ctx context.Context, id session.ID) (int64, error)

	// Watch delivers an event for every commit, and for every label write
	// (an event with Labels set), from now until ctx ends. An event is sent
	// once its write is durable and visible to reads. A watcher that falls
	// behind misses events (the next one says so); it never slows down
	// writers. Status moves and GC are not reported.
	Watch(ctx context.Context) (<-chan Event, error)

	// Close flushes pending commits and releases the store.
	Close() error
}

// Info describes a stored session.
type Info struct {
	ID      session.ID        `json:"id"`
	Lineage session.Lineage   `json:"lineage"`
	Status  Status            `json:"status"`
	Head    session.ChunkID   `json:"head,omitempty"`
	Len     int               `json:"len"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Epoch is the session's fencing epoch (see Fence).
	Epoch   int64     `json:"epoch,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Filter selects sessions for List. Zero fields select everything.
type Filter struct {
	Status []Status
	// Created in [Since, Until).
	Since, Until time.Time
	Op           string
	Parent       session.ID
	Labels       map[string]string
	// Scope, if set, selects the sessions in it (see Scope.Covers; a
	// session without scope labels is in DefaultScope).
	Scope *Scope
	// Limit caps the result (0: no limit).
	Limit int
}

// Event reports one commit, or one label write (Labels).
type Event struct {
	ID session.ID `json:"id"`
	// Head and Len are the session's head and length: those the commit
	// stored, or, for a label write, those the write saw when it wrote
	// (always known; a commit racing with the label write may have moved
	// them since, and its own event says so).
	Head session.ChunkID `json:"head"`
	Len  int             `json:"len"`
	// Labels is set on an event that reports a write of session ID's
	// labels (SetLabel, SetLabels and a backend's own forms of them, one
	// event per session written) rather than a commit: no chunk was added.
	// A watcher that only follows commits skips these.
	Labels bool `json:"labels,omitempty"`
	// Missed is set on the first event after this watcher dropped events.
	Missed bool `json:"missed,omitempty"`
}

// GCStats reports what a GC removed.
type GCStats struct {
	Sessions int `json:"sessions"`
	Chunks   int `json:"chunks"`
}

// GCStatuses returns the statuses GC collects: those given, or closed,
// archived and failed when none are.
func GCStatuses(given ...Status) []Status {
	if len(given) > 0 {
		return given
	}
	return []Status{StatusClosed, StatusArchived, StatusFailed}
}
