package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openrath/rath/agent"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// gate runs the agent and, when it pauses for approval, gives the verdict
// a person would give — here, automatically — and resumes it.
type gate struct {
	agent   *agent.Agent
	store   store.Store
	verdict agent.Verdict
}

// Forward implements flow.Module.
func (g *gate) Forward(ctx context.Context, s *session.Session) (*session.Session, error) {
	out, err := g.agent.Forward(ctx, s)
	if err != nil && !errors.Is(err, agent.ErrPaused) {
		return out, err
	}
	if err == nil { // possible live: the model finished without a command
		return runctx.Record(ctx, out, runctx.Invoke(ctx, "approval"), session.Note("The agent finished without asking to run a command: no approval was needed."))
	}
	// The paused run is durable: its status and its requests are in the
	// store. A reviewer would load it from there, maybe days later.
	info, err := g.store.Info(ctx, out.ID())
	if err != nil {
		return out, fmt.Errorf("approval: %w", err)
	}
	paused, err := g.store.Load(ctx, out.ID())
	if err != nil {
		return out, fmt.Errorf("approval: %w", err)
	}
	var asked []string
	for _, c := range paused.All() {
		if a := c.Approval; a != nil && a.Verdict == session.VerdictRequested {
			asked = append(asked, a.Subject)
		}
	}
	res, err := g.agent.Resume(ctx, paused, g.verdict)
	if err != nil {
		return res, err
	}
	given := "approved"
	if !g.verdict.Approve {
		given = "rejected"
	}
	note := fmt.Sprintf("The agent asked for approval of %s; the run paused (store status %q) and returned agent.ErrPaused. "+
		"`rath run` has no one to ask, so the example %s it automatically as %q, and agent.Resume continued the run.",
		strings.Join(asked, "; "), info.Status, given, g.verdict.By)
	return runctx.Record(ctx, res, runctx.Invoke(ctx, "approval"), session.Note(note))
}
