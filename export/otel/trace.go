package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
)

// tracerName names the tracer this package asks providers for.
const tracerName = "github.com/openrath/rath/export/otel"

func tracer(tp trace.TracerProvider) trace.Tracer { return tp.Tracer(tracerName) }

// workflowTrace holds the open spans of one workflow: its invoke_workflow
// span and the invoke_agent spans of the agent nodes under it. Export makes
// one of a session; Live makes one of a session that derives from none it
// follows, shared by the sessions derived from it. Every span it starts
// starts no earlier than its parent, and finish ends every agent span no
// later than its parent, so a child never leaves its parent's time. It is
// not safe for concurrent use.
type workflowTrace struct {
	tr     trace.Tracer
	id     session.ID      // the session it was started for
	ctx    context.Context // carries root
	root   trace.Span
	start  time.Time // root's start
	last   time.Time // the latest time under root
	named  bool      // root carries gen_ai.workflow.name
	agents map[string]*agentSpan
	order  []*agentSpan // in creation order, so children end before parents
	// models holds the first model call of agent nodes that have no span
	// yet, so that their span starts with the provider and model.
	models map[string]modelRef
}

// startWorkflow starts the invoke_workflow span of session id under ctx,
// named after the workflow if name is set.
func startWorkflow(ctx context.Context, tr trace.Tracer, id session.ID, lin session.Lineage, start time.Time, name string, opts ...trace.SpanStartOption) *workflowTrace {
	attrs := attrsOf(
		KeyOperationName.String(OpWorkflow),
		KeyConversationID.String(string(id)),
		KeyWorkflowName.String(name),
		KeyLineageOp.String(lin.Op),
		KeyLineageKind.String(string(lin.Kind)),
	)
	opts = append(opts, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	ctx, root := tr.Start(ctx, workflowSpanName(name), opts...)
	return &workflowTrace{tr: tr, id: id, ctx: ctx, root: root, start: start, last: start, named: name != "",
		agents: map[string]*agentSpan{}, models: map[string]modelRef{}}
}

// workflowSpanName is "invoke_workflow {gen_ai.workflow.name}", or
// "invoke_workflow" when the name is not known.
func workflowSpanName(name string) string {
	if name == "" {
		return OpWorkflow
	}
	return OpWorkflow + " " + name
}

// name names the workflow span after the workflow, unless it is named
// already.
func (wt *workflowTrace) name(name string) {
	if name == "" || wt.named {
		return
	}
	wt.named = true
	wt.root.SetName(workflowSpanName(name))
	wt.root.SetAttributes(KeyWorkflowName.String(name))
}

// touch extends a, its enclosing agents and the workflow to cover t.
func (wt *workflowTrace) touch(a *agentSpan, t time.Time) {
	for ; a != nil; a = a.parent {
		a.last = later(a.last, t)
	}
	wt.last = later(wt.last, t)
}

// chunk emits what c, a chunk of session conv, records: a chat or
// execute_tool span, or an event on the span enclosing it. Conversation
// chunks only extend their agent's span. What starts before the span
// enclosing it (a chunk a merge brought in from a session Live does not
// follow, say) is moved to that span's start.
func (wt *workflowTrace) chunk(c session.Chunk, conv session.ID) {
	start := chunkStart(c)
	ctx, span, a := wt.enclosing(c.Node, start, conv)
	floor := wt.start
	if a != nil {
		floor = a.start
	}
	start = later(start, floor)
	end := later(c.Time, start)
	switch c.Kind {
	case session.KindModelCall:
		wt.chat(ctx, c, conv, start, end)
		if a != nil {
			a.model(c.ModelCall)
		}
	case session.KindToolResult:
		wt.tool(ctx, c, conv, start, end)
	case session.KindError:
		f := c.Error
		span.AddEvent(EventError, trace.WithTimestamp(end), trace.WithAttributes(
			KeyErrorType.String(orOther(f.Code)), KeyErrorMessage.String(f.Message)))
		span.SetAttributes(KeyErrorType.String(orOther(f.Code)))
		span.SetStatus(codes.Error, f.Message)
	default:
		if name, attrs := chunkEvent(c); name != "" {
			span.AddEvent(name, trace.WithTimestamp(end), trace.WithAttributes(attrs...))
		}
	}
	wt.touch(a, end)
}

// finish ends every agent span at its last time, innermost first, then
// the workflow span at its last time or end, whichever is later; a
// non-empty failure marks the workflow span failed.
func (wt *workflowTrace) finish(end time.Time, failure string) {
	for i := len(wt.order) - 1; i >= 0; i-- {
		wt.order[i].end()
	}
	if failure != "" {
		wt.root.SetAttributes(KeyErrorType.String(failure))
		wt.root.SetStatus(codes.Error, "session "+failure)
	}
	wt.root.End(trace.WithTimestamp(later(wt.last, end)))
}

// chunkStart is when the work c records began: Latency (or, for a call that
// failed, its attempts' latencies) before a model_call chunk's time,
// Duration before a tool_result's, the chunk's time otherwise.
func chunkStart(c session.Chunk) time.Time {
	switch {
	case c.ModelCall != nil:
		return c.Time.Add(-callLatency(c.ModelCall))
	case c.ToolResult != nil:
		return c.Time.Add(-max(c.ToolResult.Duration, 0))
	}
	return c.Time
}

// callLatency is a call's latency, or the sum of its attempts' when it
// records none (a call that failed for good).
func callLatency(mc *session.ModelCall) time.Duration {
	if mc.Latency > 0 {
		return mc.Latency
	}
	var d time.Duration
	for _, a := range mc.Attempts {
		d += max(a.Latency, 0)
	}
	return d
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
