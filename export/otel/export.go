package otel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
)

// ErrNilSession: Export was given no session.
var ErrNilSession = errors.New("otel export: nil session")

// Export emits the spans of a finished session after the fact, timed by its
// chunks: an invoke_workflow span (a child of the span in ctx, if any),
// named after the workflow if WithWorkflowName says which, an
// invoke_agent span per agent node covering that node's first to last
// chunk, and under them a chat span per model_call chunk and an
// execute_tool span per tool_result chunk. Selector decisions, approvals,
// memory operations, compressions, placements and recorded failures become
// events on the enclosing span.
//
// If tp can flush (as an SDK tracer provider can), Export flushes it and
// returns its error.
func Export(ctx context.Context, tp trace.TracerProvider, s *session.Session, opts ...Option) error {
	if s == nil {
		return ErrNilSession
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("otel export %s: %w", s.ID(), err)
	}
	chunks := s.Chunks()
	start, end := s.ID().Time(), time.Time{}
	if len(chunks) > 0 {
		start, end = bounds(chunks)
	}
	wt := startWorkflow(ctx, tracer(tp), s.ID(), s.Lineage(), start, o.workflow)
	wt.expect(chunks)
	wt.openAgents(chunks, s.ID())
	for _, c := range chunks {
		wt.chunk(c, s.ID())
	}
	wt.finish(end, "")
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

// openAgents starts the span of every agent node of chunks, chunks of
// session conv, at the earliest start of its chunks and its nested
// agents', enclosing agents first.
func (wt *workflowTrace) openAgents(chunks []session.Chunk, conv session.ID) {
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
		wt.agent(k, name, first[k], conv)
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
