package otel_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openrath/rath/export/otel"
	"github.com/openrath/rath/session"
)

// recorded is a session as a run records it, with every span kind and
// both outcomes: a planner agent whose streamed, schema-bound call
// succeeds, whose tools succeed and fail, and whose second call fails for
// good; a writer agent whose call names no provider (as an imported one
// may); an agent nested in it that makes no model call.
func recorded(t *testing.T) *session.Session {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	const planner, writer, idle = "0/agent:planner#1", "1/agent:writer#1", "1/agent:writer#1/agent:idle#1"
	return session.FromUser("fix TestParse").Append(
		session.System("you plan").WithNode(planner).WithTime(at(1)),
		session.Of(&session.ModelCall{Provider: "anthropic", Model: "claude-x", Stream: true,
			Params: session.ModelParams{MaxTokens: 256, Stop: []string{"END"}, ResponseSchema: json.RawMessage(`{"type":"object"}`)},
			Response: session.ModelOutput{FinishReason: "tool_use", Model: "claude-x-2026", RequestID: "msg_1",
				ToolCalls: []session.ToolCall{{ID: "c1", Name: "lookup"}, {ID: "c2", Name: "broken"}}},
			Usage:    session.Usage{InputTokens: 100, OutputTokens: 20},
			Attempts: []session.Attempt{{Status: 200, Latency: time.Second}}, Latency: time.Second,
		}).WithNode(planner).WithTime(at(3)),
		session.Result(session.ToolResult{CallID: "c1", Tool: "lookup", Content: "found", Duration: time.Second}).
			WithNode(planner).WithTime(at(4)),
		session.Result(session.ToolResult{CallID: "c2", Tool: "broken", Error: &session.ToolError{Message: "no kind"},
			Duration: time.Second}).WithNode(planner).WithTime(at(5)),
		session.Of(&session.ModelCall{Provider: "anthropic", Model: "claude-x",
			Attempts: []session.Attempt{{Status: 503, Error: "overloaded", Latency: time.Second}},
		}).WithNode(planner).WithTime(at(7)),
		session.Fail(session.FailModel, "model call failed").WithNode(planner).WithTime(at(7)),
		session.Of(&session.ModelCall{Model: "imported-model", Usage: session.Usage{InputTokens: 5, OutputTokens: 1},
			Latency: time.Second}).WithNode(writer).WithTime(at(9)),
		session.Note("nothing to do").WithNode(idle).WithTime(at(10)),
	)
}

func TestExportFollowsConventions(t *testing.T) {
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	tp, err := otel.OTLP(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := recorded(t)
	if err := otel.Export(t.Context(), tp, s, otel.WithWorkflowName("fix")); err != nil {
		t.Fatal(err)
	}
	if err := otel.Export(t.Context(), tp, session.FromUser("a session of no workflow")); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	pbs, refused := rcv.received()
	if len(refused) > 0 {
		t.Fatalf("the receiver refused requests: %v", refused)
	}
	spans := spansOf(pbs)
	checkConventions(t, spans)
	if len(spans) != 10 {
		t.Errorf("%d spans, want 10", len(spans))
	}

	wf := only(t, spans, "invoke_workflow fix")
	checkWant(t, wf, want{attrs: map[string]any{workflowName: "fix", conversation: string(s.ID())}, absent: []string{errorType}})
	plain := only(t, spans, "invoke_workflow")
	checkWant(t, plain, want{absent: []string{workflowName}})

	pl := only(t, spans, "invoke_agent planner")
	under(t, pl, wf)
	checkWant(t, pl, want{attrs: map[string]any{agentName: "planner", providerName: "anthropic", requestModel: "claude-x",
		errorType: "model"}})
	wr := only(t, spans, "invoke_agent writer")
	under(t, wr, wf)
	checkWant(t, wr, want{attrs: map[string]any{providerName: "_OTHER", requestModel: "imported-model"}, absent: []string{errorType}})
	id := only(t, spans, "invoke_agent idle")
	under(t, id, wr)
	checkWant(t, id, want{attrs: map[string]any{providerName: "_OTHER"}, absent: []string{requestModel}})

	chats := named(spans, "chat claude-x")
	if len(chats) != 2 {
		t.Fatalf("%d chat claude-x spans, want 2", len(chats))
	}
	ok, bad := chats[0], chats[1]
	if ok.StartTimeUnixNano > bad.StartTimeUnixNano {
		ok, bad = bad, ok
	}
	under(t, ok, pl)
	checkWant(t, ok, want{attrs: map[string]any{providerName: "anthropic", requestModel: "claude-x",
		"gen_ai.response.model": "claude-x-2026", "gen_ai.response.id": "msg_1", inputTokens: 100, outputTokens: 20,
		"gen_ai.response.finish_reasons": []string{"tool_use"}, "gen_ai.request.stream": true,
		"gen_ai.output.type": "json", "gen_ai.request.stop_sequences": []string{"END"}, "gen_ai.request.max_tokens": 256},
		absent: []string{errorType}})
	checkWant(t, bad, want{attrs: map[string]any{errorType: "503", inputTokens: 0, outputTokens: 0},
		absent: []string{"gen_ai.response.model", "gen_ai.request.stream", "gen_ai.output.type"}})
	imp := only(t, spans, "chat imported-model")
	under(t, imp, wr)
	checkWant(t, imp, want{attrs: map[string]any{providerName: "_OTHER", inputTokens: 5, outputTokens: 1},
		absent: []string{"gen_ai.response.model"}})

	lk := only(t, spans, "execute_tool lookup")
	under(t, lk, pl)
	checkWant(t, lk, want{attrs: map[string]any{toolCallID: "c1", "gen_ai.tool.type": "function"}, absent: []string{errorType}})
	br := only(t, spans, "execute_tool broken")
	checkWant(t, br, want{attrs: map[string]any{toolCallID: "c2", errorType: "_OTHER"}})
}
