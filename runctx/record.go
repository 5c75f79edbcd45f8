package runctx

import (
	"context"

	"github.com/openrath/rath/session"
)

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
