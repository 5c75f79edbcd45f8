package otel

import (
	"context"
	"errors"
	"fmt"
	"time"

	otelglobal "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// ErrWatchEnded: the store's watch ended before Live's context (the store
// was closed).
var ErrWatchEnded = errors.New("otel live: the store's watch ended")

// pollInterval is how often Live re-reads the Info of the sessions it
// follows: status changes commit nothing, so they send no event.
var pollInterval = 2 * time.Second

// emittedCap bounds how many chunk ids Live remembers having emitted.
const emittedCap = 1 << 17

// endedCap bounds how many sessions Live remembers whose workflow ended.
const endedCap = 1 << 14

// resyncSlack widens the window in which Live looks for sessions created
// while it missed events, for commits in flight and clock skew.
const resyncSlack = time.Minute

// Live emits spans while runs happen. It watches st's commits and, for each
// session that grows, reads the new chunks and emits their chat and
// execute_tool spans and events as they commit.
//
// A session that derives from none Live follows (a workflow run's input,
// say) starts a trace: an invoke_workflow span with no parent. The
// sessions derived from a followed one (the sessions a run's steps commit)
// join their parent's workflow: their spans hang under the same
// invoke_workflow span, each noted on it by a rath.session event, so one
// run is one trace of one workflow span, its invoke_agent spans (one per
// agent node, nested as the nodes are) and their chat and execute_tool
// spans. When a followed session carries WorkflowLabel (a run's output
// does once the run ends), the workflow span is named after that workflow
// and carries it as gen_ai.workflow.name.
//
// A workflow span and its agent spans end, at the latest time they cover,
// when the session carrying WorkflowLabel reaches a finished status
// (closed, failed or archived), when every session of the workflow has
// finished or been deleted, or when Live stops. Each span ends after its
// children and no earlier than any of them, and a chunk that would start
// before its span (one a merge brought in from a session Live does not
// follow, say) is moved to the span's start, so no child leaves its
// parent's time. The workflow span has status Error if one of its
// sessions failed. A chunk committed to a session after its workflow ended
// starts a new trace. A workflow none of whose ends comes keeps its spans
// open until Live stops, and a batching exporter sends them only then.
//
// A session Live first sees is read from its start, but a chunk Live has
// already emitted (a prefix shared with a parent, a chunk a merge re-chained)
// is not emitted again. After missed events Live re-reads the Info of the
// sessions it follows and lists the sessions created meanwhile. Status
// changes and labels are seen by polling. Errors reading the store go to
// the OpenTelemetry error handler (otel.Handle) and are retried at the next
// event or poll. Spans in ctx are not parents of Live's: each workflow
// starts its own trace.
//
// Live returns nil when ctx ends, and an error if st cannot be watched or
// its watch ends first (the store closed).
func Live(ctx context.Context, st store.Store, tp trace.TracerProvider) error {
	follow, err := StartLive(ctx, st, tp)
	if err != nil {
		return err
	}
	return follow()
}

// StartLive watches st at once and returns the function that emits the
// spans, as Live does: a caller that runs it in a goroutine misses no
// commit made after StartLive returned.
func StartLive(ctx context.Context, st store.Store, tp trace.TracerProvider) (follow func() error, err error) {
	evs, err := st.Watch(ctx)
	if err != nil {
		return nil, fmt.Errorf("otel live: watch: %w", err)
	}
	return func() error { return live1(ctx, st, tp, evs) }, nil
}

func live1(ctx context.Context, st store.Store, tp trace.TracerProvider, evs <-chan store.Event) error {
	l := newLive(ctx, st, tp)
	defer l.stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			l.poll(ctx)
			continue
		case ev, ok := <-evs:
			if !ok {
				return l.closed(ctx)
			}
			l.event(ctx, ev)
			continue
		default:
		}
		l.drained()
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			l.poll(ctx)
		case ev, ok := <-evs:
			if !ok {
				return l.closed(ctx)
			}
			l.event(ctx, ev)
		}
	}
}

// live is the state of one Live call, used by its goroutine only.
type live struct {
	st       store.Store
	tr       trace.Tracer
	base     context.Context // parent context of sessions' root spans
	sessions map[session.ID]*liveSession
	emitted  *idSet[session.ChunkID]
	ended    *idSet[session.ID] // sessions whose workflow ended
	// empty and prevEmpty are the last two times the watch channel was
	// seen empty with an event received in between; events dropped before
	// the next event carrying Missed were committed after prevEmpty.
	empty, prevEmpty time.Time
	received         bool // an event arrived since empty
}

func newLive(ctx context.Context, st store.Store, tp trace.TracerProvider) *live {
	now := time.Now()
	return &live{st: st, tr: tracer(tp), base: context.WithoutCancel(ctx),
		sessions: map[session.ID]*liveSession{}, emitted: newIDSet[session.ChunkID](emittedCap),
		ended: newIDSet[session.ID](endedCap),
		empty: now, prevEmpty: now}
}

// drained notes that the watch channel is empty.
func (l *live) drained() {
	if l.received {
		l.prevEmpty, l.empty = l.empty, time.Now()
		l.received = false
	}
}

// event handles one commit event.
func (l *live) event(ctx context.Context, ev store.Event) {
	l.received = true
	if ev.Labels && !ev.Missed {
		return // a label write: no new chunks (status and labels are polled)
	}
	if ev.Missed {
		l.resync(ctx)
	}
	l.advance(ctx, ev.ID, ev.Len, nil)
}

// closed handles the end of the watch.
func (l *live) closed(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	return ErrWatchEnded
}

// report passes a store error to the OpenTelemetry error handler, unless
// Live is stopping.
func (l *live) report(ctx context.Context, err error) {
	if ctx.Err() == nil {
		otelglobal.Handle(fmt.Errorf("otel live: %w", err))
	}
}

// terminal reports whether a session with status s has finished.
func terminal(s store.Status) bool {
	return s == store.StatusClosed || s == store.StatusFailed || s == store.StatusArchived
}
