package agent

import (
	"context"

	"github.com/openrath/rath/sandbox"
	"github.com/openrath/rath/session"
)

// A WorkspaceJournal keeps, outside the host, what a run's sandbox
// workspaces hold, so that the run can go on on another host with each
// workspace as of its last committed step (see WithWorkspaceJournal).
type WorkspaceJournal interface {
	// Opened is called when an agent opens the sandbox its session s is
	// placed on (sb), before any tool runs in it: the workspace as it
	// starts, or as a resumed run finds it.
	Opened(ctx context.Context, s *session.Session, sb sandbox.Sandbox) error
	// Changed is called after a step whose tool calls changed the
	// workspace (effects, in the calls' order), before their results are
	// committed: if the run stops before they are, those calls did not
	// happen as far as its record goes.
	Changed(ctx context.Context, s *session.Session, sb sandbox.Sandbox, calls []string, effects []session.FileEffect) error
}

type journalKey struct{}

// WithWorkspaceJournal returns ctx in which agents report their sandboxes'
// workspaces to j. An error from j stops the run as a failed commit does.
func WithWorkspaceJournal(ctx context.Context, j WorkspaceJournal) context.Context {
	return context.WithValue(ctx, journalKey{}, j)
}

func journalOf(ctx context.Context) WorkspaceJournal {
	j, _ := ctx.Value(journalKey{}).(WorkspaceJournal)
	return j
}

// journalStep reports the workspace changes made by the tool results
// appended to the session from chunk `from` on.
func (r *run) journalStep(from int) error {
	j := journalOf(r.ctx)
	if j == nil || r.lease == nil {
		return nil
	}
	var calls []string
	var eff []session.FileEffect
	for i := from; i < r.s.Len(); i++ {
		if tr := r.s.Chunk(i).ToolResult; tr != nil && len(tr.Effects) > 0 && tr.SandboxID == r.lease.ID() {
			calls = append(calls, tr.CallID)
			eff = append(eff, tr.Effects...)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return j.Changed(r.ctx, r.s, r.lease.Sandbox, calls, eff)
}
