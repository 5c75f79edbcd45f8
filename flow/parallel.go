package flow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// MergeFunc joins the outputs of branches that all started from in.
type MergeFunc func(ctx context.Context, in *session.Session, outs []*session.Session) (*session.Session, error)

// MergeAll is the default merge: the common prefix, then every branch's
// suffix in branch order (session.Session.MergeAll). Under a replay the
// merge takes the record's ids for chunks re-chained as the record shows
// them (session.Recorded).
func MergeAll(ctx context.Context, in *session.Session, outs []*session.Session) (*session.Session, error) {
	if len(outs) == 0 {
		return in, nil
	}
	opts := []session.MergeOption{session.KeepPlacement(session.Ours)}
	if p := runctx.PlayerFrom(ctx); p != nil {
		opts = append(opts, session.Recorded(p.Rechained))
	}
	return outs[0].MergeAll(outs[1:], opts...)
}

// Par runs its branches concurrently, each on its own fork of the input,
// and merges their outputs; the result's lineage names every branch.
type Par struct {
	Branches []Module
	// Merge joins the outputs (MergeAll if nil).
	Merge MergeFunc
	// Sandboxes, if set, gives each branch of a placed session its own
	// copy of the workspace (sandbox.Pool.Fork); without it branches
	// share the input's sandbox.
	Sandboxes *sandbox.Pool
	// Limit bounds the branches running at once (0: all).
	Limit int
}

// Parallel returns the branches run concurrently on forks and merged.
func Parallel(ms ...Module) *Par { return &Par{Branches: ms} }

// Forward implements Module.
func (p *Par) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	segs := make([]string, len(p.Branches))
	for i, m := range p.Branches {
		segs[i] = "branch-" + fmt.Sprint(i)
		if n, ok := m.(named); ok {
			segs[i] = n.name
		}
	}
	return fanOut(ctx, s, segs, p.Limit, p.Sandboxes, p.Merge, "parallel", func(ctx context.Context, i int, f *session.Session) (*session.Session, error) {
		return Call(ctx, segs[i], p.Branches[i], f)
	})
}

// fanOut runs n branches on forks of s, at most limit at once, and merges
// them in order. Every branch runs even when one fails; the error joins
// all failures.
func fanOut(ctx context.Context, s *session.Session, segs []string, limit int, pool *sandbox.Pool, merge MergeFunc, op string,
	run func(ctx context.Context, i int, f *session.Session) (*session.Session, error)) (*session.Session, error) {
	n := len(segs)
	if merge == nil {
		merge = MergeAll
	}
	if limit <= 0 || limit > n {
		limit = n
	}
	outs := make([]*session.Session, n)
	errs := make([]error, n)
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f := s.Fork()
			if pool != nil && s.Placement().Backend != "" {
				var err error
				if f, err = forkWorkspace(ctx, pool, s, f, segs[i]); err != nil {
					errs[i] = fmt.Errorf("branch %d: sandbox: %w", i, err)
					return
				}
			}
			outs[i], errs[i] = run(ctx, i, f)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("branch %d: %w", i, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	merged, err := merge(ctx, s, outs)
	if err != nil {
		return s, fmt.Errorf("flow: merge: %w", err)
	}
	ids := make([]string, n)
	for i, o := range outs {
		ids[i] = string(o.ID())
	}
	return merged.Derive(op, map[string]string{"branches": strings.Join(ids, ",")}, outs...), nil
}

// Mapper runs Body once per item, each on a fork of the input with the
// item appended as a user message, at most Limit at once, and merges the
// outputs in item order.
type Mapper struct {
	Items     func(s *session.Session) ([]string, error)
	Body      Module
	Limit     int
	Merge     MergeFunc
	Sandboxes *sandbox.Pool
}

// Map returns a Mapper over the items items(s) gives.
func Map(items func(s *session.Session) ([]string, error), body Module, limit int) *Mapper {
	return &Mapper{Items: items, Body: body, Limit: limit}
}

// Forward implements Module.
func (m *Mapper) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	if m.Items == nil || m.Body == nil {
		return s, fmt.Errorf("%w: a Map needs Items and a Body", ErrConfig)
	}
	items, err := m.Items(s)
	if err != nil {
		return s, fmt.Errorf("flow: map items: %w", err)
	}
	segs := make([]string, len(items))
	for i := range segs {
		segs[i] = fmt.Sprintf("item-%d", i)
	}
	return fanOut(ctx, s, segs, m.Limit, m.Sandboxes, m.Merge, "map", func(ctx context.Context, i int, f *session.Session) (*session.Session, error) {
		seg := segs[i]
		in := runctx.WithPath(ctx, seg)
		f, err := runctx.Record(in, f, runctx.Invoke(in, "map:item"), session.User(items[i]))
		if err != nil {
			return f, err
		}
		return Call(ctx, seg, m.Body, f)
	})
}

// forkWorkspace gives branch f of s its own copy of s's workspace. The
// placement chunk the pool appends is recorded under the branch's node
// (through runctx.Record), so a replay serves it from the record.
func forkWorkspace(ctx context.Context, pool *sandbox.Pool, s, f *session.Session, seg string) (*session.Session, error) {
	placed, err := pool.Fork(ctx, s, f, false)
	if err != nil {
		return f, err
	}
	bctx := runctx.WithPath(ctx, seg)
	return runctx.Adopt(bctx, placed, f.Len(), runctx.Invoke(bctx, "sandbox:fork"))
}
