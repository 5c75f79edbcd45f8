package runctx

import (
	"context"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// Player serves a run from a record: replay and resume put one in the
// context (WithPlayer), and every chunk a run appends, every model call and
// every tool call consults it first. Past the end of the record it lets the
// run go live.
type Player interface {
	// Append appends chunks a run at node made to s, reconciled with the
	// record: while the record lasts each must say what the recorded chunk
	// says, and it is appended with the recorded time, so the chain repeats
	// the record's ids; past the record they are appended as they are. A
	// chunk that differs from the record is a divergence, returned as the
	// error with s unchanged.
	Append(node string, s *session.Session, cs ...session.Chunk) (*session.Session, error)
	// Model serves node's next model call: the recorded model_call if the
	// record has one (a divergence if req's digest differs from the
	// recorded one), nil past the end of the record.
	Model(node string, req *model.Request) (*session.ModelCall, error)
	// Tool serves the recorded result of a call at node. Without one,
	// issued reports that the record shows the call made but not finished
	// (a run cut short while the tool ran).
	Tool(node string, call session.ToolCall) (res *session.ToolResult, issued bool)
	// (The model call and result Model and Tool hand back are the
	// record's own, not to be changed: appended as they are, a chunk
	// holding one is taken to be the recorded chunk and copied from the
	// record whole.)
	// Peek returns the next recorded chunk of node without using it up
	// (false past the end of the record).
	Peek(node string) (session.Chunk, bool)
	// Rechained returns the parent and id the record gives the re-chained
	// copy of the chunk whose id is origin (a chunk a join moved from a
	// branch), ok false if it has none: a join being replayed passes it to
	// the merge (session.Recorded), which then looks ids up instead of
	// hashing the chunks again.
	Rechained(origin session.ChunkID) (parent, id session.ChunkID, ok bool)
}

type playerKey struct{}

// WithPlayer returns ctx carrying p.
func WithPlayer(ctx context.Context, p Player) context.Context {
	return context.WithValue(ctx, playerKey{}, p)
}

// PlayerFrom returns the Player ctx carries, or nil.
func PlayerFrom(ctx context.Context) Player {
	p, _ := ctx.Value(playerKey{}).(Player)
	return p
}

// Resumer is a Player that resumes interrupted attempts of a run: it knows
// the session each node's earlier attempts recorded into.
type Resumer interface {
	// Resumes returns the sessions the interrupted attempts of the step
	// at node derived (session.ExtraResumes), nearest first.
	Resumes(node string) []session.ID
}

// ResumesAt is the lineage extras for the session a step at node derives
// under ctx's player: the earlier attempts it continues, if the player
// resumes any (nil otherwise).
func ResumesAt(ctx context.Context, node string) map[string]string {
	r, ok := PlayerFrom(ctx).(Resumer)
	if !ok {
		return nil
	}
	return session.ResumesExtras(r.Resumes(node))
}
