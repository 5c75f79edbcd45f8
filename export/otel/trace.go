package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
)

// tracerName names the tracer this package asks providers for.
const tracerName = "github.com/openrath/rath/export/otel"

func tracer(tp trace.TracerProvider) trace.Tracer { return tp.Tracer(tracerName) }

// sessionTrace holds the open spans of one session: its invoke_workflow span
// and the invoke_agent spans of its agent nodes. It is not safe for
// concurrent use.
type sessionTrace struct {
	tr     trace.Tracer
	id     session.ID
	ctx    context.Context // carries root
	root   trace.Span
	last   time.Time // the latest time under root
	agents map[string]*agentSpan
	order  []*agentSpan // in creation order, so children end before parents
}

// agentSpan is the invoke_agent span of one agent node.
type agentSpan struct {
	ctx    context.Context // carries span
	span   trace.Span
	parent *agentSpan // the enclosing agent's, nil under the workflow span
	last   time.Time  // the latest time under span
}

// startSession starts the invoke_workflow span of session id under ctx.
func startSession(ctx context.Context, tr trace.Tracer, id session.ID, lin session.Lineage, start time.Time, opts ...trace.SpanStartOption) *sessionTrace {
	name := OpWorkflow
	if lin.Op != "" {
		name += " " + lin.Op
	}
	opts = append(opts, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			KeyOperationName.String(OpWorkflow),
			KeyConversationID.String(string(id)),
			KeyLineageOp.String(lin.Op),
			KeyLineageKind.String(string(lin.Kind)),
		))
	ctx, root := tr.Start(ctx, name, opts...)
	return &sessionTrace{tr: tr, id: id, ctx: ctx, root: root, last: start, agents: map[string]*agentSpan{}}
}

// agent returns the span of the agent node key, starting it (and the spans
// of the agents enclosing it) at start if it has none yet.
func (st *sessionTrace) agent(key, name string, start time.Time) *agentSpan {
	if a := st.agents[key]; a != nil {
		return a
	}
	ctx := st.ctx
	var parent *agentSpan
	if pk := parentAgent(key); pk != "" {
		_, pname, _ := agentNode(pk)
		parent = st.agent(pk, pname, start)
		ctx = parent.ctx
	}
	ctx, span := st.tr.Start(ctx, OpAgent+" "+name, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			KeyOperationName.String(OpAgent),
			KeyAgentName.String(name),
			KeyConversationID.String(string(st.id)),
			KeyNode.String(key),
		))
	a := &agentSpan{ctx: ctx, span: span, parent: parent, last: start}
	st.agents[key] = a
	st.order = append(st.order, a)
	return a
}

// enclosing returns the span a chunk of node belongs under: its agent's,
// started at start if need be, or the workflow span.
func (st *sessionTrace) enclosing(node string, start time.Time) (context.Context, trace.Span, *agentSpan) {
	if key, name, ok := agentNode(node); ok {
		a := st.agent(key, name, start)
		return a.ctx, a.span, a
	}
	return st.ctx, st.root, nil
}

// touch extends a, its enclosing agents and the workflow to cover t.
func (st *sessionTrace) touch(a *agentSpan, t time.Time) {
	for ; a != nil; a = a.parent {
		a.last = later(a.last, t)
	}
	st.last = later(st.last, t)
}

// chunk emits what c records: a chat or execute_tool span, or an event on
// the span enclosing it. Conversation chunks only extend their agent's span.
func (st *sessionTrace) chunk(c session.Chunk) {
	start := chunkStart(c)
	ctx, span, a := st.enclosing(c.Node, start)
	switch c.Kind {
	case session.KindModelCall:
		st.chat(ctx, c, start)
	case session.KindToolResult:
		st.tool(ctx, c, start)
	case session.KindError:
		f := c.Error
		span.AddEvent(EventError, trace.WithTimestamp(c.Time), trace.WithAttributes(
			KeyErrorType.String(f.Code), KeyErrorMessage.String(f.Message)))
		span.SetAttributes(KeyErrorType.String(f.Code))
		span.SetStatus(codes.Error, f.Message)
	default:
		if name, attrs := chunkEvent(c); name != "" {
			span.AddEvent(name, trace.WithTimestamp(c.Time), trace.WithAttributes(attrs...))
		}
	}
	st.touch(a, start)
	st.touch(a, c.Time)
}

// finish ends every agent span at its last time, then the workflow span at
// its last time or end, whichever is later; a non-empty failure marks the
// workflow span failed.
func (st *sessionTrace) finish(end time.Time, failure string) {
	for i := len(st.order) - 1; i >= 0; i-- {
		a := st.order[i]
		a.span.End(trace.WithTimestamp(a.last))
	}
	if failure != "" {
		st.root.SetAttributes(KeyErrorType.String(failure))
		st.root.SetStatus(codes.Error, "session "+failure)
	}
	st.root.End(trace.WithTimestamp(later(st.last, end)))
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

// attrsOf keeps the attributes whose value is set: non-empty strings and
// slices, non-zero numbers.
func attrsOf(kvs ...attribute.KeyValue) []attribute.KeyValue {
	out := kvs[:0]
	for _, kv := range kvs {
		if !zero(kv.Value) {
			out = append(out, kv)
		}
	}
	return out
}

func zero(v attribute.Value) bool {
	switch v.Type() {
	case attribute.STRING:
		return v.AsString() == ""
	case attribute.INT64:
		return v.AsInt64() == 0
	case attribute.FLOAT64:
		return v.AsFloat64() == 0
	case attribute.STRINGSLICE:
		return len(v.AsStringSlice()) == 0
	}
	return false
}
