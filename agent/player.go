package agent

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
	// Peek returns the next recorded chunk of node without using it up
	// (false past the end of the record).
	Peek(node string) (session.Chunk, bool)
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

// Record appends cs, made by node, to s — through ctx's Player if there is
// one, so that workflow modules' own chunks (decisions, compressions,
// verdicts) replay like an agent's.
func Record(ctx context.Context, s *session.Session, node string, cs ...session.Chunk) (*session.Session, error) {
	for i := range cs {
		cs[i] = cs[i].WithNode(node)
	}
	if p := PlayerFrom(ctx); p != nil {
		return p.Append(node, s, cs...)
	}
	return s.TryAppend(cs...)
}

// Adopt re-records, as node's own, the chunks others appended to s since it
// had n chunks (a memory operation, a sandbox opening or fork): they are
// re-appended through Record, so they carry node and replay like chunks
// node made.
func Adopt(ctx context.Context, s *session.Session, n int, node string) (*session.Session, error) {
	if s.Len() == n {
		return s, nil
	}
	var cs []session.Chunk
	for _, c := range s.From(n) {
		c.ID, c.Parent = "", ""
		cs = append(cs, c)
	}
	base, err := s.Rewind(n)
	if err != nil {
		return s, err
	}
	return Record(ctx, base, node, cs...)
}

// Served appends to s, under a replay, node's next recorded chunks for as
// long as match accepts them, instead of the operation that made them
// (memory may have changed since, a sandbox need not open: the record says
// what the run saw and did). It reports whether any was served; without a
// player it does nothing.
func Served(ctx context.Context, s *session.Session, node string, match func(session.Chunk) bool) (*session.Session, bool, error) {
	p := PlayerFrom(ctx)
	if p == nil {
		return s, false, nil
	}
	served := false
	for {
		c, ok := p.Peek(node)
		if !ok || !match(c) {
			return s, served, nil
		}
		c.ID, c.Parent = "", ""
		var err error
		if s, err = Record(ctx, s, node, c); err != nil {
			return s, served, err
		}
		served = true
	}
}

type noStoreKey struct{}

// WithoutStore returns ctx in which agents commit nothing to their stores:
// a pure replay, which must leave the store as it found it.
func WithoutStore(ctx context.Context) context.Context {
	return context.WithValue(ctx, noStoreKey{}, true)
}

func storeOff(ctx context.Context) bool {
	off, _ := ctx.Value(noStoreKey{}).(bool)
	return off
}
