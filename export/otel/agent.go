package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
)

// agentSpan is the invoke_agent span of one agent node.
type agentSpan struct {
	ctx         context.Context // carries span
	span        trace.Span
	parent      *agentSpan // the enclosing agent's, nil under the workflow span
	start, last time.Time  // span's start, the latest time under span
	provider    bool       // span carries gen_ai.provider.name
}

// modelRef is the provider and model of an agent's first model call.
type modelRef struct{ provider, model string }

// attrs are the gen_ai.provider.name and gen_ai.request.model of an agent
// whose first model call m is.
func (m modelRef) attrs() []attribute.KeyValue {
	return attrsOf(KeyProviderName.String(orOther(m.provider)), KeyRequestModel.String(m.model))
}

// expect notes the first model call of each agent node of chunks that has
// no span yet, so that its span starts with the provider and model the
// conventions ask for at creation.
func (wt *workflowTrace) expect(chunks []session.Chunk) {
	for _, c := range chunks {
		if c.ModelCall == nil {
			continue
		}
		key, _, ok := agentNode(c.Node)
		if !ok || wt.agents[key] != nil {
			continue
		}
		if _, seen := wt.models[key]; !seen {
			wt.models[key] = modelRef{c.ModelCall.Provider, c.ModelCall.Model}
		}
	}
}

// agent returns the span of the agent node key, starting it (and the spans
// of the agents enclosing it) at start, or at its parent's start if that
// is later, if it has none yet. conv is the session the node was seen in.
func (wt *workflowTrace) agent(key, name string, start time.Time, conv session.ID) *agentSpan {
	if a := wt.agents[key]; a != nil {
		return a
	}
	ctx, floor := wt.ctx, wt.start
	var parent *agentSpan
	if pk := parentAgent(key); pk != "" {
		_, pname, _ := agentNode(pk)
		parent = wt.agent(pk, pname, start, conv)
		ctx, floor = parent.ctx, parent.start
	}
	start = later(start, floor)
	attrs := []attribute.KeyValue{
		KeyOperationName.String(OpAgent),
		KeyAgentName.String(name),
		KeyConversationID.String(string(conv)),
		KeyNode.String(key),
	}
	m, known := wt.models[key]
	if known {
		attrs = append(attrs, m.attrs()...)
		delete(wt.models, key)
	}
	ctx, span := wt.tr.Start(ctx, OpAgent+" "+name, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	a := &agentSpan{ctx: ctx, span: span, parent: parent, start: start, last: start, provider: known}
	wt.agents[key] = a
	wt.order = append(wt.order, a)
	return a
}

// enclosing returns the span a chunk of node belongs under: its agent's,
// started at start if need be, or the workflow span.
func (wt *workflowTrace) enclosing(node string, start time.Time, conv session.ID) (context.Context, trace.Span, *agentSpan) {
	if key, name, ok := agentNode(node); ok {
		a := wt.agent(key, name, start, conv)
		return a.ctx, a.span, a
	}
	return wt.ctx, wt.root, nil
}

// model gives a's span the provider and model of mc, a call of its own, if
// it has none yet.
func (a *agentSpan) model(mc *session.ModelCall) {
	if a.provider {
		return
	}
	a.provider = true
	a.span.SetAttributes(modelRef{mc.Provider, mc.Model}.attrs()...)
}

// end ends a's span at its last time. gen_ai.provider.name is required: an
// agent that made no model call has "_OTHER".
func (a *agentSpan) end() {
	if !a.provider {
		a.provider = true
		a.span.SetAttributes(KeyProviderName.String(other))
	}
	a.span.End(trace.WithTimestamp(a.last))
}
