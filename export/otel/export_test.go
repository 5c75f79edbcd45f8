package otel

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/openrath/rath/session"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

const (
	coder    = "0/bug/agent:coder#1"
	reviewer = "0/agent:reviewer#1"
	linter   = reviewer + "/agent:linter#1"
)

// runSession is a workflow run: a selector routes to a coder agent whose
// tool fails and whose second model call fails for good, then a reviewer
// agent with a nested linter agent, then a validator's verdict.
func runSession(t *testing.T) *session.Session {
	t.Helper()
	temp := 0.2
	s := session.New().Append(session.User("TestParse fails").WithTime(t0)).Derive("review", nil)
	s = s.Append(
		session.Of(&session.Decision{Selector: "triage", Candidates: []session.Candidate{{Name: "bug"}, {Name: "docs"}},
			Choice: "bug", Reason: "a failing test"}).WithNode("0/selector:triage#1").WithTime(at(time.Second)),
		session.System("you fix bugs").WithNode(coder).WithTime(at(2*time.Second)),
		session.Of(&session.ModelCall{
			Provider: "anthropic", Model: "claude-sonnet",
			Params: session.ModelParams{MaxTokens: 1024, Temperature: &temp},
			Response: session.ModelOutput{Text: "running the tests", FinishReason: "tool_use",
				Model: "claude-sonnet-20260101", RequestID: "msg_1"},
			Usage: session.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60, CacheWriteTokens: 10,
				ReasoningTokens: 5, CostUSD: 0.01},
			Attempts: []session.Attempt{
				{Status: 529, Error: "overloaded", Latency: 500 * time.Millisecond},
				{Status: 200, Latency: time.Second},
			},
			Latency: 2 * time.Second,
		}).WithNode(coder).WithTime(at(5*time.Second)),
		session.Assistant("running the tests", session.ToolCall{ID: "call_1", Name: "run_tests"}).
			WithNode(coder).WithTime(at(5*time.Second)),
		session.Result(session.ToolResult{CallID: "call_1", Tool: "run_tests", Content: "FAIL",
			Error:    &session.ToolError{Kind: session.ToolErrExecution, Message: "exit status 1"},
			Duration: 1500 * time.Millisecond, SandboxID: "sb-1"}).WithNode(coder).WithTime(at(7*time.Second)),
		session.Of(&session.MemoryEvent{Op: session.MemoryRecall, Store: "notes", Query: "parse",
			Scopes: []string{"repo"}, K: 3}).WithNode(coder).WithTime(at(8*time.Second)),
		session.Of(&session.ModelCall{Provider: "anthropic", Model: "claude-sonnet",
			Attempts: []session.Attempt{{Status: 500, Error: "internal error", Latency: 300 * time.Millisecond}},
		}).WithNode(coder).WithTime(at(9*time.Second)),
		session.Fail(session.FailModel, "model call failed").WithNode(coder).WithTime(at(9100*time.Millisecond)),
		session.Of(&session.ModelCall{Provider: "openai", Model: "gpt-5",
			Response: session.ModelOutput{FinishReason: "stop", Model: "gpt-5-2026", RequestID: "chatcmpl-2"},
			Usage:    session.Usage{InputTokens: 50, OutputTokens: 10},
			Attempts: []session.Attempt{{Status: 200, Latency: time.Second}},
			Latency:  time.Second,
		}).WithNode(reviewer).WithTime(at(11*time.Second)),
		session.Result(session.ToolResult{CallID: "call_2", Tool: "read_file", Content: "ok",
			Duration: 200 * time.Millisecond}).WithNode(reviewer).WithTime(at(12*time.Second)),
		session.Of(&session.ModelCall{Provider: "openai", Model: "gpt-5-mini",
			Response: session.ModelOutput{FinishReason: "stop"},
			Usage:    session.Usage{InputTokens: 7, OutputTokens: 3},
			Latency:  500 * time.Millisecond,
		}).WithNode(linter).WithTime(at(13*time.Second)),
	)
	s = s.Append(
		session.Of(&session.Compression{From: s.Chunk(1).ID, To: s.Chunk(3).ID, Count: 3, Summary: "triaged",
			Model: "gpt-5-mini", TokensBefore: 900, TokensAfter: 80}).WithNode(reviewer).WithTime(at(14*time.Second)),
		session.Of(&session.Approval{Subject: "tests pass", Verdict: session.VerdictRejected, By: "validator",
			Reason: "1 failure"}).WithNode("0/validate:tests#1").WithTime(at(15*time.Second)),
	)
	return s
}

// find returns the span named name that starts at start.
func find(t *testing.T, spans tracetest.SpanStubs, name string, start time.Time) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == name && s.StartTime.Equal(start) {
			return s
		}
	}
	t.Fatalf("no span %q starting at %v; spans: %v", name, start, names(spans))
	return tracetest.SpanStub{}
}

// checkTimes checks a span's start and end.
func checkTimes(t *testing.T, s tracetest.SpanStub, start, end time.Time) {
	t.Helper()
	if !s.StartTime.Equal(start) || !s.EndTime.Equal(end) {
		t.Errorf("span %q: %v .. %v, want %v .. %v", s.Name, s.StartTime.Sub(t0), s.EndTime.Sub(t0), start.Sub(t0), end.Sub(t0))
	}
}

// checkStatus checks a span's status.
func checkStatus(t *testing.T, s tracetest.SpanStub, code codes.Code, desc string) {
	t.Helper()
	if s.Status.Code != code || s.Status.Description != desc {
		t.Errorf("span %q: status %v %q, want %v %q", s.Name, s.Status.Code, s.Status.Description, code, desc)
	}
}

// checkEvents checks a span's event names, times and attributes.
func checkEvents(t *testing.T, s tracetest.SpanStub, want ...wantEvent) {
	t.Helper()
	if len(s.Events) != len(want) {
		t.Fatalf("span %q: %d events, want %d: %+v", s.Name, len(s.Events), len(want), s.Events)
	}
	for i, w := range want {
		e := s.Events[i]
		if e.Name != w.name || !e.Time.Equal(w.at) {
			t.Errorf("span %q event %d: %s at %v, want %s at %v", s.Name, i, e.Name, e.Time.Sub(t0), w.name, w.at.Sub(t0))
		}
		checkAttrs(t, s.Name+" event "+w.name, e.Attributes, w.attrs)
	}
}

type wantEvent struct {
	name  string
	at    time.Time
	attrs map[attribute.Key]any
}

func TestExport(t *testing.T) {
	tp, exp := recorder(t)
	s := runSession(t)
	if err := Export(t.Context(), tp, s, WithWorkflowName("fix")); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 10 {
		t.Fatalf("%d spans, want 10: %v", len(spans), names(spans))
	}
	conv := string(s.ID())
	sec := func(f float64) time.Time { return t0.Add(time.Duration(f * float64(time.Second))) }

	wf := one(t, spans, "invoke_workflow fix")
	if wf.Parent.IsValid() {
		t.Errorf("workflow span has parent %v", wf.Parent)
	}
	checkTimes(t, wf, t0, sec(15))
	checkStatus(t, wf, codes.Unset, "")
	checkAttrs(t, "workflow", wf.Attributes, map[attribute.Key]any{
		KeyOperationName: "invoke_workflow", KeyConversationID: conv, KeyWorkflowName: "fix",
		KeyLineageOp: "review", KeyLineageKind: "derive",
	})
	checkEvents(t, wf,
		wantEvent{EventDecision, sec(1), map[attribute.Key]any{KeyNode: "0/selector:triage#1", KeySelector: "triage",
			KeyChoice: "bug", KeyCandidates: []string{"bug", "docs"}, KeyReason: "a failing test"}},
		wantEvent{EventApproval, sec(15), map[attribute.Key]any{KeyNode: "0/validate:tests#1", KeySubject: "tests pass",
			KeyVerdict: "rejected", KeyBy: "validator", KeyReason: "1 failure"}},
	)

	cod := one(t, spans, "invoke_agent coder")
	childOf(t, cod, wf)
	checkTimes(t, cod, sec(2), sec(9.1))
	checkStatus(t, cod, codes.Error, "model call failed")
	checkAttrs(t, "coder", cod.Attributes, map[attribute.Key]any{
		KeyOperationName: "invoke_agent", KeyAgentName: "coder", KeyConversationID: conv,
		KeyProviderName: "anthropic", KeyRequestModel: "claude-sonnet", KeyNode: coder, KeyErrorType: "model",
	})
	checkEvents(t, cod,
		wantEvent{EventMemory, sec(8), map[attribute.Key]any{KeyNode: coder, KeyMemoryOp: "recall",
			KeyMemoryStore: "notes", KeyMemoryScopes: []string{"repo"}, KeyMemoryK: 3, KeyMemoryHits: 0}},
		wantEvent{EventError, sec(9.1), map[attribute.Key]any{KeyErrorType: "model", KeyErrorMessage: "model call failed"}},
	)

	rev := one(t, spans, "invoke_agent reviewer")
	childOf(t, rev, wf)
	checkTimes(t, rev, sec(10), sec(14))
	checkStatus(t, rev, codes.Unset, "")
	checkAttrs(t, "reviewer", rev.Attributes, map[attribute.Key]any{
		KeyOperationName: "invoke_agent", KeyAgentName: "reviewer", KeyConversationID: conv,
		KeyProviderName: "openai", KeyRequestModel: "gpt-5", KeyNode: reviewer,
	})
	checkEvents(t, rev, wantEvent{EventCompress, sec(14), map[attribute.Key]any{KeyNode: reviewer,
		KeyCompressCount: 3, KeyCompressModel: "gpt-5-mini", KeyTokensBefore: 900, KeyTokensAfter: 80}})

	lin := one(t, spans, "invoke_agent linter")
	childOf(t, lin, rev)
	checkTimes(t, lin, sec(12.5), sec(13))
	checkAttrs(t, "linter", lin.Attributes, map[attribute.Key]any{
		KeyOperationName: "invoke_agent", KeyAgentName: "linter", KeyConversationID: conv, KeyNode: linter,
		KeyProviderName: "openai", KeyRequestModel: "gpt-5-mini",
	})

	chat1 := find(t, spans, "chat claude-sonnet", sec(3))
	childOf(t, chat1, cod)
	checkTimes(t, chat1, sec(3), sec(5))
	checkStatus(t, chat1, codes.Unset, "")
	if chat1.SpanKind != trace.SpanKindClient {
		t.Errorf("chat span kind %v, want client", chat1.SpanKind)
	}
	checkAttrs(t, "chat 1", chat1.Attributes, map[attribute.Key]any{
		KeyOperationName: "chat", KeyConversationID: conv, KeyNode: coder,
		KeyProviderName: "anthropic", KeyRequestModel: "claude-sonnet", KeyRequestMaxTokens: 1024,
		KeyRequestTemperature: 0.2, KeyResponseModel: "claude-sonnet-20260101", KeyResponseID: "msg_1",
		KeyFinishReasons: []string{"tool_use"}, KeyInputTokens: 100, KeyOutputTokens: 20,
		KeyCacheReadTokens: 60, KeyCacheCreationTokens: 10, KeyReasoningTokens: 5, KeyCostUSD: 0.01,
	})
	checkEvents(t, chat1,
		wantEvent{EventAttempt, sec(3.5), map[attribute.Key]any{KeyAttemptIndex: 1, KeyHTTPStatusCode: 529,
			KeyAttemptError: "overloaded", KeyLatencyMS: 500.0}},
		wantEvent{EventAttempt, sec(4.5), map[attribute.Key]any{KeyAttemptIndex: 2, KeyHTTPStatusCode: 200,
			KeyLatencyMS: 1000.0}},
	)

	chat2 := find(t, spans, "chat claude-sonnet", sec(8.7))
	childOf(t, chat2, cod)
	checkTimes(t, chat2, sec(8.7), sec(9))
	checkStatus(t, chat2, codes.Error, "internal error")
	checkAttrs(t, "chat 2", chat2.Attributes, map[attribute.Key]any{
		KeyOperationName: "chat", KeyConversationID: conv, KeyNode: coder,
		KeyProviderName: "anthropic", KeyRequestModel: "claude-sonnet",
		KeyInputTokens: 0, KeyOutputTokens: 0, KeyErrorType: "500",
	})
	checkEvents(t, chat2, wantEvent{EventAttempt, sec(9), map[attribute.Key]any{KeyAttemptIndex: 1,
		KeyHTTPStatusCode: 500, KeyAttemptError: "internal error", KeyLatencyMS: 300.0}})

	chat3 := one(t, spans, "chat gpt-5")
	childOf(t, chat3, rev)
	checkTimes(t, chat3, sec(10), sec(11))
	checkAttrs(t, "chat 3", chat3.Attributes, map[attribute.Key]any{
		KeyOperationName: "chat", KeyConversationID: conv, KeyNode: reviewer,
		KeyProviderName: "openai", KeyRequestModel: "gpt-5", KeyResponseModel: "gpt-5-2026",
		KeyResponseID: "chatcmpl-2", KeyFinishReasons: []string{"stop"}, KeyInputTokens: 50, KeyOutputTokens: 10,
	})

	chat4 := one(t, spans, "chat gpt-5-mini")
	childOf(t, chat4, lin)
	checkTimes(t, chat4, sec(12.5), sec(13))

	tool1 := one(t, spans, "execute_tool run_tests")
	childOf(t, tool1, cod)
	checkTimes(t, tool1, sec(5.5), sec(7))
	checkStatus(t, tool1, codes.Error, "exit status 1")
	checkAttrs(t, "run_tests", tool1.Attributes, map[attribute.Key]any{
		KeyOperationName: "execute_tool", KeyConversationID: conv, KeyNode: coder,
		KeyToolName: "run_tests", KeyToolCallID: "call_1", KeyToolType: "function",
		KeySandbox: "sb-1", KeyErrorType: "execution",
	})

	tool2 := one(t, spans, "execute_tool read_file")
	childOf(t, tool2, rev)
	checkTimes(t, tool2, sec(11.8), sec(12))
	checkStatus(t, tool2, codes.Unset, "")
	checkAttrs(t, "read_file", tool2.Attributes, map[attribute.Key]any{
		KeyOperationName: "execute_tool", KeyConversationID: conv, KeyNode: reviewer,
		KeyToolName: "read_file", KeyToolCallID: "call_2", KeyToolType: "function",
	})
}

func TestExportUnderContextSpan(t *testing.T) {
	tp, exp := recorder(t)
	ctx, parent := tp.Tracer("test").Start(t.Context(), "caller")
	s := session.FromUser("hello")
	if err := Export(ctx, tp, s); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := exp.GetSpans()
	wf := one(t, spans, "invoke_workflow")
	childOf(t, wf, one(t, spans, "caller"))
	c := s.Chunk(0)
	checkTimes(t, wf, c.Time, c.Time)
}

func TestExportEmptySession(t *testing.T) {
	tp, exp := recorder(t)
	s := session.New()
	if err := Export(t.Context(), tp, s); err != nil {
		t.Fatal(err)
	}
	wf := one(t, exp.GetSpans(), "invoke_workflow")
	if !wf.StartTime.Equal(s.ID().Time()) || !wf.EndTime.Equal(s.ID().Time()) {
		t.Errorf("empty session span %v .. %v, want its id's time %v", wf.StartTime, wf.EndTime, s.ID().Time())
	}
}

// failingFlush is a tracer provider whose flush fails.
type failingFlush struct{ trace.TracerProvider }

var errFlush = errors.New("collector unreachable")

func (failingFlush) ForceFlush(context.Context) error { return errFlush }

func TestExportErrors(t *testing.T) {
	tp, _ := recorder(t)
	if err := Export(t.Context(), failingFlush{tp}, runSession(t)); !errors.Is(err, errFlush) {
		t.Errorf("Export with a failing flush: %v, want %v", err, errFlush)
	}
	if err := Export(t.Context(), tp, nil); err == nil {
		t.Error("Export(nil session) succeeded")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Export(ctx, tp, runSession(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("Export with a cancelled context: %v", err)
	}
	// A provider without a flush has no error to report.
	if err := Export(t.Context(), noFlush{tp}, runSession(t)); err != nil {
		t.Errorf("Export to a provider without flush: %v", err)
	}
}

// noFlush hides the flush of the provider it wraps.
type noFlush struct{ trace.TracerProvider }
