// Package flow composes Session -> Session modules into workflows:
// Sequential, Parallel, Loop, Map, Selector, Compressor, Validator and
// Approval. Each application of a module runs under a node path carried in
// the context ("triage/branch-1/agent:coder#1") and derives its output with
// that path as the lineage op, so the session graph shows the workflow's
// structure and replay can match every recorded call to the call that
// repeats it.
package flow

import (
	"context"
	"errors"
	"fmt"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Module is one Session -> Session layer; *agent.Agent is one.
type Module interface {
	Forward(ctx context.Context, s *session.Session) (*session.Session, error)
}

// Func makes a module of a function.
type Func func(ctx context.Context, s *session.Session) (*session.Session, error)

// Forward implements Module.
func (f Func) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	return f(ctx, s)
}

var (
	// ErrRejected: a validator or a human rejected the session.
	ErrRejected = errors.New("flow: rejected")
	// ErrPaused: an approval gate waits for a human's verdict (Decide, then
	// run again).
	ErrPaused = errors.New("flow: paused for approval")
	// ErrNoRoute: a selector chose none of its routes and has no "none"
	// route to take.
	ErrNoRoute = errors.New("flow: no route")
	// ErrConfig: a module is misconfigured.
	ErrConfig = errors.New("flow: bad configuration")
)

// named is a module with a name: its segment in node paths and in Describe.
type named struct {
	name string
	Module
}

// Named gives m a name, used as its node-path segment and by Describe.
func Named(name string, m Module) Module { return named{name: name, Module: m} }

// Call applies m to s under the path segment seg: m runs with the path
// extended and its output is derived from s's with the path as the op.
// Modules written by users call their children through Call to give them
// stable names.
func Call(ctx context.Context, seg string, m Module, s *session.Session) (*session.Session, error) {
	if m == nil {
		return s, fmt.Errorf("%w: nil module at %q", ErrConfig, seg)
	}
	ctx = runctx.WithPath(ctx, seg)
	out, err := m.Forward(ctx, s)
	if out == nil {
		return nil, err
	}
	out = out.Derive(runctx.Path(ctx), nil)
	// With a store, every application is stored (its chunks are shared with
	// the module's output), so the stored lineage shows the workflow. A run
	// that stopped to go on later (its slice ended, a call awaits review)
	// has no output yet.
	if st := runctx.Store(ctx); st != nil && !stopped(err) {
		cerr := st.Commit(ctx, out, "")
		if cerr == nil {
			cerr = st.SetLabel(store.WithLabelEvents(ctx), out.ID(), runctx.Label, string(runctx.ID(ctx)))
		}
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("flow: commit %s: %w", out.ID(), cerr))
		}
	}
	return out, err
}

// Run runs m on in as one workflow run: with a store, in is committed
// first (so the run can be resumed by its id) and the output after.
func Run(ctx context.Context, st store.Store, m Module, in *session.Session) (*session.Session, error) {
	ctx = runctx.WithRun(ctx, in.ID(), st)
	if st != nil {
		if err := commitInput(ctx, st, in); err != nil {
			return nil, err
		}
	}
	out, err := m.Forward(ctx, in)
	if st != nil && out != nil && !stopped(err) {
		cerr := commitNew(ctx, st, out)
		if cerr == nil {
			cerr = st.SetLabels(ctx, out.ID(), outputLabels(ctx, string(in.ID())))
		}
		if cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return out, err
}

// stopped reports whether err only stops a run that goes on later, from
// its committed steps: its output so far is not an output.
func stopped(err error) bool {
	return errors.Is(err, runctx.ErrYielded) || errors.Is(err, agent.ErrNeedsReview)
}

// commitInput commits a run's input in and records its head as the run's
// start (runctx.StartLabel) unless a run on it began before. A resumed
// run's input may be a prefix of the stored session (its modules committed
// onto it what the resume repeats from the record): nothing is committed
// then.
func commitInput(ctx context.Context, st store.Store, in *session.Session) error {
	info, err := st.Info(ctx, in.ID())
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("flow: commit %s: %w", in.ID(), err)
		}
		if err := st.Commit(ctx, in, ""); err != nil {
			return fmt.Errorf("flow: commit %s: %w", in.ID(), err)
		}
	} else if info.Head != in.Head() {
		held, err := holds(ctx, st, info, in)
		if err != nil {
			return err
		}
		if !held {
			if err := st.Commit(ctx, in, info.Head); err != nil {
				return fmt.Errorf("flow: commit %s: %w", in.ID(), err)
			}
		}
	}
	if info.Labels[runctx.StartLabel] != "" || in.Len() == 0 {
		return nil
	}
	if err := st.SetLabel(ctx, in.ID(), runctx.StartLabel, string(in.Head())); err != nil {
		return fmt.Errorf("flow: label %s: %w", in.ID(), err)
	}
	return nil
}

// holds reports whether the stored session info describes has s as a
// prefix: s's head is its chunk at s's last position.
func holds(ctx context.Context, st store.Store, info store.Info, s *session.Session) (bool, error) {
	if s.Len() == 0 || info.Len < s.Len() {
		return false, nil
	}
	cs, err := st.Range(ctx, s.ID(), s.Len()-1, s.Len())
	if err != nil {
		return false, fmt.Errorf("flow: read %s: %w", s.ID(), err)
	}
	return len(cs) == 1 && cs[0].ID == s.Head(), nil
}

// commitNew commits s unless the store holds it at this head already.
func commitNew(ctx context.Context, st store.Store, s *session.Session) error {
	prev := session.ChunkID("")
	if info, err := st.Info(ctx, s.ID()); err == nil {
		if info.Head == s.Head() {
			return nil
		}
		prev = info.Head
	}
	if err := st.Commit(ctx, s, prev); err != nil {
		return fmt.Errorf("flow: commit %s: %w", s.ID(), err)
	}
	return nil
}
