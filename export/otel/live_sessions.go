package otel

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// advance emits the chunks of session id up to length to that Live has not
// read yet. info is the session's Info if the caller has it; a session seen
// for the first time is read from its start, and one whose info says it has
// finished is ended.
func (l *live) advance(ctx context.Context, id session.ID, to int, info *store.Info) {
	ls := l.sessions[id]
	from := 0
	if ls != nil {
		from = ls.seen
	}
	if to <= from {
		return
	}
	if ls == nil && info == nil {
		i, err := l.st.Info(ctx, id)
		if err != nil {
			l.report(ctx, err)
			return
		}
		info = &i
	}
	chunks, err := l.st.Range(ctx, id, from, to)
	if err != nil {
		l.report(ctx, err)
		return
	}
	var fresh []session.Chunk
	for _, c := range chunks {
		if !l.emitted.has(c.ID) && (c.Origin == "" || !l.emitted.has(c.Origin)) {
			fresh = append(fresh, c)
		}
		l.emitted.add(c.ID)
	}
	if ls == nil {
		if len(fresh) == 0 && terminal(info.Status) {
			return
		}
		ls = l.open(*info, fresh)
	}
	for _, c := range fresh {
		ls.chunk(c)
	}
	ls.seen = max(ls.seen, from+len(chunks))
	if info != nil && terminal(info.Status) {
		l.end(id, info)
	}
}

// open starts following a session: its workflow span starts at its
// creation or its first chunk's start, whichever is earlier, under the
// workflow span of the first parent Live follows, linked to the others.
func (l *live) open(info store.Info, fresh []session.Chunk) *liveSession {
	start := info.Created
	for _, c := range fresh {
		if s := chunkStart(c); start.IsZero() || s.Before(start) {
			start = s
		}
	}
	if start.IsZero() {
		start = time.Now()
	}
	parent := l.base
	var links []trace.Link
	for _, p := range info.Lineage.Parents {
		ps := l.sessions[p]
		switch {
		case ps == nil:
		case parent == l.base:
			parent = ps.ctx
		default:
			links = append(links, trace.Link{SpanContext: trace.SpanContextFromContext(ps.ctx)})
		}
	}
	ls := &liveSession{sessionTrace: startSession(parent, l.tr, info.ID, info.Lineage, start, trace.WithLinks(links...))}
	l.sessions[info.ID] = ls
	return ls
}

// end ends the spans of session id: at its last update if info says it
// finished, with status Error if it failed; at the latest time they cover
// if info is nil.
func (l *live) end(id session.ID, info *store.Info) {
	ls := l.sessions[id]
	if ls == nil {
		return
	}
	delete(l.sessions, id)
	var at time.Time
	failure := ""
	if info != nil {
		at = info.Updated
		if info.Status == store.StatusFailed {
			failure = string(store.StatusFailed)
		}
	}
	ls.finish(at, failure)
}

// poll re-reads the Info of every followed session: it reads chunks whose
// events were missed and ends the sessions that finished or were deleted.
func (l *live) poll(ctx context.Context) {
	for _, id := range l.followed() {
		ls := l.sessions[id]
		if ls == nil {
			continue
		}
		info, err := l.st.Info(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			l.end(id, nil)
			continue
		}
		if err != nil {
			l.report(ctx, err)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		if info.Len > ls.seen {
			l.advance(ctx, id, info.Len, nil)
		}
		if terminal(info.Status) {
			l.end(id, &info)
		}
	}
}

// resync recovers from missed events: it polls the followed sessions and
// reads the sessions created since events may have been dropped.
func (l *live) resync(ctx context.Context) {
	l.poll(ctx)
	infos, err := l.st.List(ctx, store.Filter{Since: l.prevEmpty.Add(-resyncSlack)})
	if err != nil {
		l.report(ctx, err)
		return
	}
	// List is newest first; parents are opened before their children.
	for _, info := range slices.Backward(infos) {
		if l.sessions[info.ID] == nil {
			l.advance(ctx, info.ID, info.Len, &info)
		}
	}
}

// followed returns the ids of the followed sessions, oldest first, so
// parents are handled before the sessions derived from them.
func (l *live) followed() []session.ID {
	ids := make([]session.ID, 0, len(l.sessions))
	for id := range l.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids) // ids are ULIDs: sorting them orders them by creation
	return ids
}

// stop ends the spans of every followed session.
func (l *live) stop() {
	for _, id := range l.followed() {
		l.end(id, nil)
	}
}
