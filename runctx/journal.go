package runctx

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

// Journal returns the WorkspaceJournal ctx carries, or nil.
func Journal(ctx context.Context) WorkspaceJournal {
	j, _ := ctx.Value(journalKey{}).(WorkspaceJournal)
	return j
}
