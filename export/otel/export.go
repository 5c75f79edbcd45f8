package otel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
)

// Export emits the spans of a finished session after the fact, timed by its
// chunks: an invoke_workflow span named after the session's lineage op
// (a child of the span in ctx, if any), an invoke_agent span per agent node
// covering that node's first to last chunk, and under them a chat span per
// model_call chunk and an execute_tool span per tool_result chunk. Selector
// decisions, approvals, memory operations, compressions, placements and
// recorded failures become events on the enclosing span.
//
// If tp can flush (as an SDK tracer provider can), Export flushes it and
// returns its error.
func Export(ctx context.Context, tp trace.TracerProvider, s *session.Session) error {
	if s == nil {
		return errors.New("otel export: nil session")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("otel export %s: %w", s.ID(), err)
	}
	chunks := s.Chunks()
	start, end := s.ID().Time(), time.Time{}
	if len(chunks) > 0 {
		start, end = bounds(chunks)
	}
	st := startSession(ctx, tracer(tp), s.ID(), s.Lineage(), start)
	st.openAgents(chunks)
	for _, c := range chunks {
		st.chunk(c)
	}
	st.finish(end, "")
	if err := flush(ctx, tp); err != nil {
		return fmt.Errorf("otel export %s: %w", s.ID(), err)
	}
	return nil
}

// bounds returns the earliest start and the latest time of chunks.
func bounds(chunks []session.Chunk) (start, end time.Time) {
	start, end = chunkStart(chunks[0]), chunks[0].Time
	for _, c := range chunks[1:] {
		start, end = earlier(start, chunkStart(c)), later(end, c.Time)
	}
	return start, end
}

// openAgents starts the span of every agent node of chunks at the earliest
// start of its chunks and its nested agents', enclosing agents first.
func (st *sessionTrace) openAgents(chunks []session.Chunk) {
	first := map[string]time.Time{}
	var order []string
	for _, c := range chunks {
		key, _, ok := agentNode(c.Node)
		if !ok {
			continue
		}
		start := chunkStart(c)
		var chain []string // key and the agents enclosing it, innermost first
		for k := key; k != ""; k = parentAgent(k) {
			chain = append(chain, k)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			k := chain[i]
			if t, seen := first[k]; seen {
				first[k] = earlier(t, start)
				continue
			}
			first[k] = start
			order = append(order, k)
		}
	}
	for _, k := range order {
		_, name, _ := agentNode(k)
		st.agent(k, name, first[k])
	}
}

// flush flushes tp if it can be flushed.
func flush(ctx context.Context, tp trace.TracerProvider) error {
	f, ok := tp.(interface{ ForceFlush(context.Context) error })
	if !ok {
		return nil
	}
	if err := f.ForceFlush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}
