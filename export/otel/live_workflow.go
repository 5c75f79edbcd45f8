package otel

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// liveWorkflow is a workflow trace Live keeps: that of a session deriving
// from none Live follows, shared by the sessions derived from it.
type liveWorkflow struct {
	*workflowTrace
	members []*liveSession
	open    int       // members not finished
	end     time.Time // the latest update of its finished members
	failed  bool      // a member failed
}

// open starts following a session: it joins the workflow of the first
// parent Live follows, linking that workflow to the other parents'; with
// none, it starts a workflow (a new trace) at the session's creation or
// its first chunk's start, whichever is earlier.
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
	var wf *liveWorkflow
	var links []trace.Link
	for _, p := range info.Lineage.Parents {
		ps := l.sessions[p]
		switch {
		case ps == nil:
		case wf == nil:
			wf = ps.wf
		case ps.wf != wf:
			links = append(links, trace.Link{SpanContext: trace.SpanContextFromContext(ps.wf.ctx)})
		}
	}
	if wf == nil {
		wf = &liveWorkflow{workflowTrace: startWorkflow(l.base, l.tr, info.ID, info.Lineage, start, "", trace.WithNewRoot())}
	} else {
		wf.join(info, start, links)
	}
	ls := &liveSession{id: info.ID, wf: wf}
	wf.members = append(wf.members, ls)
	wf.open++
	l.sessions[info.ID] = ls
	return ls
}

// join notes on the workflow span that the session info describes, which
// started at start, joined the workflow, and links the span to the
// workflows of its other followed parents.
func (wf *liveWorkflow) join(info store.Info, start time.Time, links []trace.Link) {
	parents := make([]string, len(info.Lineage.Parents))
	for i, p := range info.Lineage.Parents {
		parents[i] = string(p)
	}
	at := later(start, wf.start)
	wf.root.AddEvent(EventSession, trace.WithTimestamp(at), trace.WithAttributes(attrsOf(
		KeySession.String(string(info.ID)),
		KeyLineageOp.String(info.Lineage.Op),
		KeyLineageKind.String(string(info.Lineage.Kind)),
		KeyParents.StringSlice(parents),
	)...))
	for _, link := range links {
		wf.root.AddLink(link)
	}
	wf.touch(nil, at)
}

// finish notes that ls finished, as info says, or was deleted (info nil).
// The workflow ends when its output finishes or when none of its sessions
// is left unfinished.
func (l *live) finish(ctx context.Context, ls *liveSession, info *store.Info) {
	if ls.done {
		return
	}
	ls.done = true
	wf := ls.wf
	wf.open--
	if info != nil {
		wf.end = later(wf.end, info.Updated)
		if info.Status == store.StatusFailed {
			wf.failed = true
		}
	}
	if ls.output || wf.open == 0 {
		l.catchUp(ctx, wf)
		l.close(wf)
	}
}

// catchUp reads what the unfinished sessions of wf committed that Live has
// not read yet (their events may still be queued), so that it is emitted
// before the workflow ends rather than in a new trace after it.
func (l *live) catchUp(ctx context.Context, wf *liveWorkflow) {
	for _, m := range wf.members {
		if m.done {
			continue
		}
		info, err := l.st.Info(ctx, m.id)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				l.report(ctx, err)
			}
			continue
		}
		if info.Len > m.seen {
			l.read(ctx, m, info.Len)
		}
		wf.name(info.Labels[WorkflowLabel])
	}
}

// close ends the spans of wf and stops following its sessions: what they
// commit later starts a new trace.
func (l *live) close(wf *liveWorkflow) {
	failure := ""
	if wf.failed {
		failure = string(store.StatusFailed)
	}
	wf.finish(wf.end, failure)
	for _, m := range wf.members {
		delete(l.sessions, m.id)
		l.ended.add(m.id)
	}
}

// stop ends the spans of every workflow Live keeps, oldest first.
func (l *live) stop() {
	seen := map[*liveWorkflow]bool{}
	var wfs []*liveWorkflow
	for _, ls := range l.sessions {
		if !seen[ls.wf] {
			seen[ls.wf] = true
			wfs = append(wfs, ls.wf)
		}
	}
	slices.SortFunc(wfs, func(a, b *liveWorkflow) int { return cmp.Compare(a.id, b.id) })
	for _, wf := range wfs {
		l.close(wf)
	}
}
