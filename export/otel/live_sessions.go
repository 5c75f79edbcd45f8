package otel

import (
	"context"
	"errors"
	"slices"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// liveSession is a followed session: the workflow it belongs to and how
// many of its chunks were read.
type liveSession struct {
	id     session.ID
	wf     *liveWorkflow
	seen   int
	done   bool // it finished or was deleted
	output bool // it carries WorkflowLabel: a run's output
}

// advance emits the chunks of session id up to length to that Live has not
// read yet. info is the session's Info if the caller has it: its labels
// may name the workflow, and a finished status finishes the session. A
// session seen for the first time is read from its start.
func (l *live) advance(ctx context.Context, id session.ID, to int, info *store.Info) {
	ls := l.sessions[id]
	if ls == nil {
		if to <= 0 {
			return // nothing to follow yet
		}
		if info == nil {
			i, err := l.st.Info(ctx, id)
			if err != nil {
				l.report(ctx, err)
				return
			}
			info = &i
		}
		if ls = l.follow(ctx, *info, to); ls == nil {
			return
		}
	} else if to > ls.seen {
		l.read(ctx, ls, to)
	}
	if info != nil {
		l.update(ctx, ls, *info)
	}
}

// follow starts following the session info describes, reading its chunks
// up to to. It follows nothing (and returns nil) if the session brings no
// chunk Live has not emitted, derives from no session Live follows, and
// has finished or its workflow has ended. A session derived from a
// followed one is followed even if it has finished and brings nothing new:
// it may be the output that names and ends the workflow.
func (l *live) follow(ctx context.Context, info store.Info, to int) *liveSession {
	chunks, err := l.st.Range(ctx, info.ID, 0, to)
	if err != nil {
		l.report(ctx, err)
		return nil
	}
	fresh := l.fresh(chunks)
	if len(fresh) == 0 && !l.followsParent(info) && (terminal(info.Status) || l.ended.has(info.ID)) {
		return nil
	}
	ls := l.open(info, fresh)
	ls.seen = len(chunks)
	l.emit(ls, fresh)
	return ls
}

// followsParent reports whether Live follows a parent of the session info
// describes.
func (l *live) followsParent(info store.Info) bool {
	for _, p := range info.Lineage.Parents {
		if l.sessions[p] != nil {
			return true
		}
	}
	return false
}

// read emits the chunks of ls from the last read up to to.
func (l *live) read(ctx context.Context, ls *liveSession, to int) {
	chunks, err := l.st.Range(ctx, ls.id, ls.seen, to)
	if err != nil {
		l.report(ctx, err)
		return
	}
	ls.seen += len(chunks)
	l.emit(ls, l.fresh(chunks))
}

// fresh returns the chunks Live has not emitted yet, and notes them all as
// emitted.
func (l *live) fresh(chunks []session.Chunk) []session.Chunk {
	var out []session.Chunk
	for _, c := range chunks {
		if !l.emitted.has(c.ID) && (c.Origin == "" || !l.emitted.has(c.Origin)) {
			out = append(out, c)
		}
		l.emitted.add(c.ID)
	}
	return out
}

// emit emits chunks of ls in its workflow.
func (l *live) emit(ls *liveSession, chunks []session.Chunk) {
	ls.wf.expect(chunks)
	for _, c := range chunks {
		ls.wf.chunk(c, ls.id)
	}
}

// update applies what ls's Info says: a workflow label names its
// workflow, and a finished status finishes it.
func (l *live) update(ctx context.Context, ls *liveSession, info store.Info) {
	if name := info.Labels[WorkflowLabel]; name != "" {
		ls.output = true
		ls.wf.name(name)
	}
	if terminal(info.Status) {
		l.finish(ctx, ls, &info)
	}
}

// poll re-reads the Info of every followed session that has not finished:
// it reads chunks whose events were missed, sees labels, and finishes the
// sessions that finished or were deleted.
func (l *live) poll(ctx context.Context) {
	for _, id := range l.followed() {
		ls := l.sessions[id]
		if ls == nil || ls.done {
			continue
		}
		info, err := l.st.Info(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			l.finish(ctx, ls, nil)
			continue
		}
		if err != nil {
			l.report(ctx, err)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		l.advance(ctx, id, info.Len, &info)
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
