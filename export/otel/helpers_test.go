package otel

import (
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// recorder returns a tracer provider exporting synchronously to memory.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return tp, exp
}

// one returns the only span named name.
func one(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1; spans: %v", len(found), name, names(spans))
	}
	return found[0]
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	slices.Sort(out)
	return out
}

// attrs returns kvs as a map of their values' Go forms.
func attrs(kvs []attribute.KeyValue) map[attribute.Key]any {
	m := map[attribute.Key]any{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.AsInterface()
	}
	return m
}

// checkAttrs checks that kvs hold exactly want.
func checkAttrs(t *testing.T, what string, kvs []attribute.KeyValue, want map[attribute.Key]any) {
	t.Helper()
	got := attrs(kvs)
	for k, w := range want {
		if g, ok := got[k]; !ok || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: %s = %v (set %v), want %v", what, k, g, ok, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected attribute %s = %v", what, k, g)
		}
	}
}

// childOf checks that child's parent is parent.
func childOf(t *testing.T, child, parent tracetest.SpanStub) {
	t.Helper()
	if child.Parent.SpanID() != parent.SpanContext.SpanID() {
		t.Errorf("span %q: parent %s, want %q (%s)", child.Name, child.Parent.SpanID(), parent.Name, parent.SpanContext.SpanID())
	}
	if child.SpanContext.TraceID() != parent.SpanContext.TraceID() {
		t.Errorf("span %q: trace %s, want %s", child.Name, child.SpanContext.TraceID(), parent.SpanContext.TraceID())
	}
}

// checkTree checks that every span's parent was exported too and that each
// span lies within its parent's time: it starts no earlier and ends no
// later.
func checkTree(t *testing.T, spans tracetest.SpanStubs) {
	t.Helper()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	for _, s := range spans {
		if s.EndTime.Before(s.StartTime) {
			t.Errorf("span %q ends (%v) before it starts (%v)", s.Name, s.EndTime, s.StartTime)
		}
		if !s.Parent.IsValid() {
			continue
		}
		p, ok := byID[s.Parent.SpanID()]
		if !ok {
			t.Errorf("span %q: its parent %s was not exported", s.Name, s.Parent.SpanID())
			continue
		}
		if s.StartTime.Before(p.StartTime) || s.EndTime.After(p.EndTime) {
			t.Errorf("span %q (%v .. %v) leaves its parent %q (%v .. %v)", s.Name, s.StartTime, s.EndTime,
				p.Name, p.StartTime, p.EndTime)
		}
	}
}
