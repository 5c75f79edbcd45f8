package agent

import (
	"fmt"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/policy"
	"github.com/openrath/rath/runctx"
	"github.com/openrath/rath/session"
)

// recall queries memory once, before the first step, with the latest user
// message; the recall chunk (with its hits) is what the model sees.
func (r *run) recall() error {
	m := r.a.cfg.Memory
	if m == nil {
		return nil
	}
	query := ""
	for _, msg := range r.s.Transcript() {
		if msg.Role == session.RoleUser {
			query = msg.Content
		}
	}
	if query == "" {
		return nil
	}
	ru, ok, err := r.decideMemory(policy.KindMemoryRead, r.a.cfg.MemoryScopes)
	if err != nil || !ok {
		return err // denied: skipped, as the decision chunk says
	}
	if r.replayMemory(session.MemoryRecall) {
		return nil
	}
	k := r.a.cfg.RecallK
	if k <= 0 {
		k = 5
	}
	ctx, cancel := ru.within(r.ctx)
	defer cancel()
	n := r.s.Len()
	_, s, err := m.Recall(ctx, r.s, memory.Query{Text: query, Scopes: r.a.cfg.MemoryScopes, K: k})
	if err != nil {
		return fmt.Errorf("agent %s: %w", r.a.cfg.Name, err)
	}
	r.s = s
	return r.adopt(n)
}

// memorize commits the finished run into memory when configured.
func (r *run) memorize() error {
	m := r.a.cfg.Memory
	if m == nil || !r.a.cfg.CommitOnForward {
		return nil
	}
	ru, ok, err := r.decideMemory(policy.KindMemoryWrite, r.a.cfg.MemoryScopes[:1])
	if err != nil || !ok {
		return err // denied: skipped, as the decision chunk says
	}
	if r.replayMemory(session.MemoryCommit) {
		return nil
	}
	o := memory.CommitOptions{Agent: r.a.cfg.Name, Scope: r.a.cfg.MemoryScopes[0]}
	if r.a.cfg.ExtractFacts {
		o.Model = r.a.cfg.Model
	}
	ctx, cancel := ru.within(r.ctx)
	defer cancel()
	n := r.s.Len()
	s, err := m.Commit(ctx, r.s, o)
	if err != nil {
		return fmt.Errorf("agent %s: %w", r.a.cfg.Name, err)
	}
	r.s = s
	return r.adopt(n)
}

// replayMemory, under a replay whose record holds this run's memory
// operation op next, appends the recorded chunks instead of querying or
// writing memory again (memory may have changed since; the record says what
// the run saw and did). It reports whether it did.
func (r *run) replayMemory(op session.MemoryOp) bool {
	s, served, _ := runctx.Served(r.ctx, r.s, r.node, func(c session.Chunk) bool { return c.Memory != nil && c.Memory.Op == op })
	r.s = s
	return served
}
