package otel_test

import (
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The checklist below is taken from the GenAI semantic conventions of
// OpenTelemetry semantic conventions v1.41.1 (docs/gen-ai/gen-ai-spans.md:
// "Inference" and "Execute tool span"; docs/gen-ai/gen-ai-agent-spans.md:
// "Invoke agent internal span" and "Invoke workflow span"); the
// semantic-conventions-genai repository, where they moved, keeps the same
// kinds, names and required attributes (read at its commit 002c8a6). For
// each operation it lists the span kind, the span name, the
// Required attributes and where the span may sit. The conditionally
// required attributes depend on what was recorded, so each test states
// which it expects of which span, and checkSpan checks the ones that
// follow from the span itself (error.type with an error status).
//
// Where the runtime deviates on purpose (see docs/otel.md):
//   - gen_ai.provider.name is required of chat and invoke_agent spans; when
//     no provider is recorded (an imported call, an agent that made no
//     model call) it is "_OTHER".
//   - every trace has an invoke_workflow root, even for a session that is
//     not a registered workflow's run: the conventions would have no
//     workflow span then, but the runtime's sessions are its units of
//     work; such a span carries no gen_ai.workflow.name and is named
//     "invoke_workflow".
//   - span names fall back to the bare operation when the attribute they
//     name is not known (the conventions say so for invoke_agent only).

// Attribute keys of the conventions the checks use.
const (
	opName       = "gen_ai.operation.name"
	providerName = "gen_ai.provider.name"
	requestModel = "gen_ai.request.model"
	agentName    = "gen_ai.agent.name"
	workflowName = "gen_ai.workflow.name"
	toolName     = "gen_ai.tool.name"
	toolCallID   = "gen_ai.tool.call.id"
	conversation = "gen_ai.conversation.id"
	errorType    = "error.type"
	inputTokens  = "gen_ai.usage.input_tokens"
	outputTokens = "gen_ai.usage.output_tokens"
)

// rule is what the conventions ask of every span of one operation.
type rule struct {
	kind tracepb.Span_SpanKind
	// nameAttr is the attribute the span name follows the operation with:
	// "{operation} {value}".
	nameAttr string
	required []string
	// parents are the operations of the spans this one may be a child of;
	// none: it is a trace's root.
	parents []string
}

var rules = map[string]rule{
	// Inference: "Span kind SHOULD be CLIENT", name "{gen_ai.operation.name}
	// {gen_ai.request.model}"; Required: operation, provider.
	"chat": {tracepb.Span_SPAN_KIND_CLIENT, requestModel,
		[]string{opName, providerName}, []string{"invoke_agent", "invoke_workflow"}},
	// Execute tool: INTERNAL, "execute_tool {gen_ai.tool.name}"; Required:
	// operation, tool name.
	"execute_tool": {tracepb.Span_SPAN_KIND_INTERNAL, toolName,
		[]string{opName, toolName}, []string{"invoke_agent", "invoke_workflow"}},
	// Invoke agent internal (an agent in the same process): INTERNAL,
	// "invoke_agent {gen_ai.agent.name}"; Required: operation, provider.
	"invoke_agent": {tracepb.Span_SPAN_KIND_INTERNAL, agentName,
		[]string{opName, providerName}, []string{"invoke_agent", "invoke_workflow"}},
	// Invoke workflow: INTERNAL, "invoke_workflow {gen_ai.workflow.name}";
	// Required: operation.
	"invoke_workflow": {tracepb.Span_SPAN_KIND_INTERNAL, workflowName,
		[]string{opName}, nil},
}

// span is a received span with its attributes by key.
type span struct {
	*tracepb.Span
	attrs map[string]*commonpb.AnyValue
}

func (s span) op() string { return s.str(opName) }

func (s span) str(key string) string { return s.attrs[key].GetStringValue() }

func (s span) has(key string) bool { return s.attrs[key] != nil }

func (s span) id() string { return hex.EncodeToString(s.SpanId) }

func (s span) String() string { return fmt.Sprintf("%q (%s)", s.Name, s.id()) }

func spansOf(pbs []*tracepb.Span) []span {
	out := make([]span, len(pbs))
	for i, p := range pbs {
		m := map[string]*commonpb.AnyValue{}
		for _, kv := range p.Attributes {
			m[kv.Key] = kv.Value
		}
		out[i] = span{p, m}
	}
	return out
}

// checkConventions checks every span against its operation's rule and the
// trace structure: each span's parent was received, is of an operation the
// rule allows and holds it in time, and a span with error.type has status
// Error and the other way round (Recording Errors).
func checkConventions(t *testing.T, spans []span) {
	t.Helper()
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.id()] = s
	}
	for _, s := range spans {
		r, ok := rules[s.op()]
		if !ok {
			t.Errorf("span %v: gen_ai.operation.name %q is none of the operations emitted", s, s.op())
			continue
		}
		if s.Kind != r.kind {
			t.Errorf("span %v: kind %v, want %v", s, s.Kind, r.kind)
		}
		want := s.op()
		if v := s.str(r.nameAttr); v != "" {
			want += " " + v
		}
		if s.Name != want {
			t.Errorf("span %v: want the name %q", s, want)
		}
		for _, k := range r.required {
			if s.str(k) == "" {
				t.Errorf("span %v: required %s missing", s, k)
			}
		}
		if !s.has(conversation) {
			t.Errorf("span %v: no %s though the session is known", s, conversation)
		}
		failed := s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR
		if failed != (s.str(errorType) != "") {
			t.Errorf("span %v: status %v with error.type %q: error.type is required exactly when the operation failed",
				s, s.Status.GetCode(), s.str(errorType))
		}
		if s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %v ends before it starts", s)
		}
		if len(s.ParentSpanId) == 0 {
			if len(r.parents) != 0 {
				t.Errorf("span %v is a root; a %s span belongs under one of %v", s, s.op(), r.parents)
			}
			continue
		}
		p, ok := byID[hex.EncodeToString(s.ParentSpanId)]
		switch {
		case !ok:
			t.Errorf("span %v: parent %x was not received", s, s.ParentSpanId)
			continue
		case !slices.Contains(r.parents, p.op()):
			t.Errorf("span %v is under %v (%s); want one of %v", s, p, p.op(), r.parents)
		case string(p.TraceId) != string(s.TraceId):
			t.Errorf("span %v is in another trace than its parent %v", s, p)
		}
		if s.StartTimeUnixNano < p.StartTimeUnixNano || s.EndTimeUnixNano > p.EndTimeUnixNano {
			t.Errorf("span %v (%d .. %d) leaves its parent %v (%d .. %d)", s, s.StartTimeUnixNano, s.EndTimeUnixNano,
				p, p.StartTimeUnixNano, p.EndTimeUnixNano)
		}
	}
}

// want is what a test expects of the conditionally required and
// recommended attributes of one span: values by key (an int64, a bool, a
// string or a []string), and keys that must be absent.
type want struct {
	attrs  map[string]any
	absent []string
}

// checkWant checks s against w.
func checkWant(t *testing.T, s span, w want) {
	t.Helper()
	for k, v := range w.attrs {
		got, ok := value(s.attrs[k])
		if !ok || fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("span %v: %s = %v (set %v), want %v", s, k, got, ok, v)
		}
	}
	for _, k := range w.absent {
		if s.has(k) {
			t.Errorf("span %v: %s is set (%v), want it absent", s, k, s.attrs[k])
		}
	}
}

// value is v's Go value.
func value(v *commonpb.AnyValue) (any, bool) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue, true
	case *commonpb.AnyValue_IntValue:
		return x.IntValue, true
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue, true
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue, true
	case *commonpb.AnyValue_ArrayValue:
		var out []string
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, e.GetStringValue())
		}
		return out, true
	}
	return nil, false
}

// named returns the spans named name.
func named(spans []span, name string) []span {
	var out []span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// only returns the only span named name.
func only(t *testing.T, spans []span, name string) span {
	t.Helper()
	found := named(spans, name)
	if len(found) != 1 {
		var all []string
		for _, s := range spans {
			all = append(all, s.Name)
		}
		slices.Sort(all)
		t.Fatalf("%d spans named %q, want 1; spans: %v", len(found), name, all)
	}
	return found[0]
}

// under checks that child's parent is parent.
func under(t *testing.T, child, parent span) {
	t.Helper()
	if string(child.ParentSpanId) != string(parent.SpanId) {
		t.Errorf("span %v: parent %x, want %v", child, child.ParentSpanId, parent)
	}
}
