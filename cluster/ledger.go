package cluster

import (
	"context"
	"fmt"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// record appends c to the run's ledger: the session, beside the run, that
// holds its takeover decisions and lifecycle notes. (They are not appended
// to the input: a run's agents derive their sessions from the input, and a
// resumed run must find it as its record left it.) The ledger is created
// on first use; writes go under ctx's fence.
func (c *Cluster) record(ctx context.Context, run *Run, ch session.Chunk) error {
	st := c.rt.Store
	var s *session.Session
	if run.Ledger != "" {
		var err error
		if s, err = st.Load(ctx, run.Ledger); err != nil {
			return fmt.Errorf("cluster: ledger of %s: %w", run.ID, err)
		}
	}
	prev := session.ChunkID("")
	if s == nil {
		s = session.New().Append(session.Note(fmt.Sprintf("ledger of cluster run %s (workflow %s): where it went and why", run.ID, run.Workflow)))
	} else {
		prev = s.Head()
	}
	next := s.Append(ch)
	if err := st.Commit(store.WithCreateScope(ctx, run.Scope()), next, prev); err != nil { // the run's owner reads it
		return fmt.Errorf("cluster: ledger of %s: %w", run.ID, err)
	}
	if prev == "" {
		if err := st.SetLabels(ctx, next.ID(), map[string]string{LabelKind: "ledger", LabelLedger: string(run.ID)}); err != nil {
			return err
		}
		run.Ledger = next.ID()
	}
	return nil
}

// note records a decision about a run: on its input while the run has not
// started (nothing derives from the input yet, and `rath show` of the run
// then shows it), else on its ledger. in is the input if the caller has
// read it (nil: read here); note returns the input as it now is (nil if
// it was not read).
func (c *Cluster) note(ctx context.Context, run *Run, in *session.Session, ch session.Chunk) (*session.Session, error) {
	if run.Slices > 1 || run.Ledger != "" {
		return in, c.record(ctx, run, ch)
	}
	if in == nil {
		var err error
		if in, err = c.rt.Store.Load(ctx, run.ID); err != nil {
			return nil, err
		}
	}
	next := in.Append(ch)
	if err := c.rt.Store.Commit(ctx, next, in.Head()); err != nil {
		return nil, fmt.Errorf("cluster: run %s: %w", run.ID, err)
	}
	return next, nil
}
