package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/openrath/rath/session"
)

// Scoped returns st as seen from scope sc: what a principal of a tenant
// and project may read and write, and nothing else.
//
//   - List and Count select only sessions in sc (Filter.Scope), whatever
//     the filter asks.
//   - A session outside sc is not found (ErrNotFound) by every call that
//     names it, and is left out of lineage answers and Watch.
//   - A new session committed through the view is born in sc: its scope
//     labels are set in its commit's transaction (a session whose first
//     parent is stored in sc is born in that parent's scope; a parent
//     outside sc counts as one not stored). Scope labels cannot be
//     changed through the view (ErrOutOfScope).
//   - GC is refused (ErrOutOfScope): it is the store's own.
//
// The view remembers the sessions it found in scope (scope labels never
// change), so a session's scope costs one lookup per view.
func Scoped(st Store, sc Scope) Store {
	if sc.Tenant == "" {
		sc.Tenant = DefaultScope
	}
	return &scoped{st: st, sc: sc, seen: map[session.ID]bool{}}
}

type scoped struct {
	st Store
	sc Scope

	mu   sync.Mutex
	seen map[session.ID]bool // in scope (true) or not (false)
}

// ScopeOfView returns the scope of a view made by Scoped, and whether st
// is one.
func ScopeOfView(st Store) (Scope, bool) {
	v, ok := st.(*scoped)
	if !ok {
		return Scope{}, false
	}
	return v.sc, true
}

// in reports whether session id is in the view's scope (false, nil when
// it is not stored).
func (v *scoped) in(ctx context.Context, id session.ID) (bool, error) {
	v.mu.Lock()
	ok, known := v.seen[id]
	v.mu.Unlock()
	if known {
		return ok, nil
	}
	info, err := v.st.Info(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok = v.sc.Covers(ScopeOf(info.Labels))
	v.remember(id, ok)
	return ok, nil
}

func (v *scoped) remember(id session.ID, ok bool) {
	v.mu.Lock()
	if len(v.seen) > 4096 {
		clear(v.seen)
	}
	v.seen[id] = ok
	v.mu.Unlock()
}

// check is nil when id is in scope, else an error wrapping ErrNotFound.
func (v *scoped) check(ctx context.Context, id session.ID) error {
	ok, err := v.in(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: session %s", ErrNotFound, id)
	}
	return nil
}

func (v *scoped) Commit(ctx context.Context, s *session.Session, prev session.ChunkID) error {
	if prev != "" {
		if err := v.check(ctx, s.ID()); err != nil {
			return err
		}
		return v.st.Commit(ctx, s, prev)
	}
	info, err := v.st.Info(ctx, s.ID())
	switch {
	case err == nil: // a retried commit, or a commit racing with another
		if !v.sc.Covers(ScopeOf(info.Labels)) {
			// Session ids are the store's, across scopes: the id is
			// taken, and that is all the answer says.
			return fmt.Errorf("%w: the session id %s is taken", ErrConflict, s.ID())
		}
		return v.st.Commit(ctx, s, prev)
	case !errors.Is(err, ErrNotFound):
		return err
	}
	inherit := false // born in a stored parent's scope
	for i, p := range s.Lineage().Parents {
		pi, err := v.st.Info(ctx, p)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !v.sc.Covers(ScopeOf(pi.Labels)) {
			// Another scope's parent is as good as not stored: the
			// session is born in the view's scope, and the answer is
			// the one a parent never stored gets, so that it tells
			// nothing of what exists outside the scope.
			continue
		}
		inherit = inherit || i == 0
	}
	if !inherit {
		ctx = WithCreateScope(ctx, v.sc)
	}
	if err := v.st.Commit(ctx, s, prev); err != nil {
		return err
	}
	v.remember(s.ID(), true)
	return nil
}

func (v *scoped) Load(ctx context.Context, id session.ID) (*session.Session, error) {
	if err := v.check(ctx, id); err != nil {
		return nil, err
	}
	return v.st.Load(ctx, id)
}

func (v *scoped) Tail(ctx context.Context, id session.ID, n int) ([]session.Chunk, error) {
	if err := v.check(ctx, id); err != nil {
		return nil, err
	}
	return v.st.Tail(ctx, id, n)
}

func (v *scoped) Range(ctx context.Context, id session.ID, from, to int) ([]session.Chunk, error) {
	if err := v.check(ctx, id); err != nil {
		return nil, err
	}
	return v.st.Range(ctx, id, from, to)
}

func (v *scoped) Info(ctx context.Context, id session.ID) (Info, error) {
	info, err := v.st.Info(ctx, id)
	if err != nil {
		return Info{}, err
	}
	ok := v.sc.Covers(ScopeOf(info.Labels))
	v.remember(id, ok)
	if !ok {
		return Info{}, fmt.Errorf("%w: session %s", ErrNotFound, id)
	}
	return info, nil
}

// filter is f confined to the view's scope.
func (v *scoped) filter(f Filter) Filter {
	sc := v.sc
	f.Scope = &sc
	if f.Labels != nil {
		f.Labels = maps.Clone(f.Labels)
	}
	return f
}

func (v *scoped) List(ctx context.Context, f Filter) ([]Info, error) {
	infos, err := v.st.List(ctx, v.filter(f))
	if err != nil {
		return nil, err
	}
	// The filter selected in the store; check again here, so that a
	// backend that ignored Filter.Scope leaks nothing.
	out := infos[:0]
	for _, in := range infos {
		if v.sc.Covers(ScopeOf(in.Labels)) {
			out = append(out, in)
		}
	}
	return out, nil
}

func (v *scoped) Count(ctx context.Context, f Filter) (int, error) {
	return v.st.Count(ctx, v.filter(f))
}

// visible keeps the ids in scope.
func (v *scoped) visible(ctx context.Context, ids []session.ID, err error) ([]session.ID, error) {
	if err != nil {
		return nil, err
	}
	out := ids[:0:0]
	for _, id := range ids {
		ok, err := v.in(ctx, id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, id)
		}
	}
	return out, nil
}

func (v *scoped) Parents(ctx context.Context, id session.ID) ([]session.ID, error) {
	if err := v.check(ctx, id); err != nil {
		return nil, err
	}
	ids, err := v.st.Parents(ctx, id)
	return v.visible(ctx, ids, err)
}

func (v *scoped) Children(ctx context.Context, id session.ID) ([]session.ID, error) {
	if err := v.check(ctx, id); err != nil {
		return nil, err
	}
	ids, err := v.st.Children(ctx, id)
	return v.visible(ctx, ids, err)
}

func (v *scoped) Ancestors(ctx context.Context, id session.ID) ([]session.ID, error) {
	if err := v.check(ctx, id); err != nil {
		return nil, err
	}
	ids, err := v.st.Ancestors(ctx, id)
	return v.visible(ctx, ids, err)
}

func (v *scoped) Descendants(ctx context.Context, id session.ID) ([]session.ID, error) {
	if err := v.check(ctx, id); err != nil {
		return nil, err
	}
	ids, err := v.st.Descendants(ctx, id)
	return v.visible(ctx, ids, err)
}

func (v *scoped) SetStatus(ctx context.Context, id session.ID, to Status) error {
	if err := v.check(ctx, id); err != nil {
		return err
	}
	return v.st.SetStatus(ctx, id, to)
}

func (v *scoped) SetLabel(ctx context.Context, id session.ID, key, value string) error {
	return v.SetLabels(ctx, id, map[string]string{key: value})
}

func (v *scoped) SetLabels(ctx context.Context, id session.ID, labels map[string]string) error {
	for k := range labels {
		if k == LabelTenant || k == LabelProject {
			return fmt.Errorf("%w: the label %s is set when a session is created, never after", ErrOutOfScope, k)
		}
	}
	if err := v.check(ctx, id); err != nil {
		return err
	}
	return v.st.SetLabels(ctx, id, labels)
}

func (v *scoped) GC(context.Context, time.Duration, ...Status) (GCStats, error) {
	return GCStats{}, fmt.Errorf("%w: GC is the store's, not a scope's", ErrOutOfScope)
}

func (v *scoped) Verify(ctx context.Context, id session.ID) error {
	if err := v.check(ctx, id); err != nil {
		return err
	}
	return v.st.Verify(ctx, id)
}

func (v *scoped) Advance(ctx context.Context, id session.ID) (int64, error) {
	if err := v.check(ctx, id); err != nil {
		return 0, err
	}
	return v.st.Advance(ctx, id)
}

func (v *scoped) Epoch(ctx context.Context, id session.ID) (int64, error) {
	if err := v.check(ctx, id); err != nil {
		return 0, err
	}
	return v.st.Epoch(ctx, id)
}

// Watch delivers the events of sessions in scope (a Missed mark on an
// event left out moves to the next one delivered).
func (v *scoped) Watch(ctx context.Context) (<-chan Event, error) {
	in, err := v.st.Watch(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan Event, cap(in))
	go func() {
		defer close(out)
		missed := false
		for ev := range in {
			ok, err := v.in(ctx, ev.ID)
			if err != nil || !ok {
				missed = missed || ev.Missed
				continue
			}
			ev.Missed = ev.Missed || missed
			missed = false
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// Close does nothing: the view does not own the store.
func (v *scoped) Close() error { return nil }
