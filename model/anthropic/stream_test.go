package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

func TestStreamTextOverManyDeltas(t *testing.T) {
	var pieces []string
	for i := range 25 {
		pieces = append(pieces, fmt.Sprintf("w%d ", i))
	}
	srv := newServer(t, streamOK(msgStart("msg_1", 10, 0, 0, 1)+ping()+textBlock(0, pieces...)+msgDelta("end_turn", 25)+msgStop()))
	evs, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(pieces, ""); resp.Text != want {
		t.Fatalf("text %q, want %q", resp.Text, want)
	}
	var got []string
	for _, ev := range evs {
		if ev.Kind == model.EventText {
			got = append(got, ev.Delta)
		}
		if ev.Kind == model.EventDone {
			t.Fatal("the provider emitted EventDone; model.New does")
		}
	}
	if strings.Join(got, "|") != strings.Join(pieces, "|") {
		t.Fatalf("text events %q, want one per delta %q", got, pieces)
	}
	if resp.FinishReason != "stop" || resp.Model != "claude-test-20250101" || resp.RequestID != "req_test_1" {
		t.Fatalf("finish %q model %q request id %q", resp.FinishReason, resp.Model, resp.RequestID)
	}

	body := srv.body(t, 0)
	if body["stream"] != true || body["model"] != "claude-test" || body["max_tokens"] != float64(DefaultMaxTokens) {
		t.Fatalf("request stream=%v model=%v max_tokens=%v", body["stream"], body["model"], body["max_tokens"])
	}
	if _, ok := body["system"]; ok {
		t.Fatalf("system sent without system messages: %v", body["system"])
	}
	if got := path(t, body, "messages", 0, "content", 0, "text"); got != "hi" {
		t.Fatalf("user text %v", got)
	}
	h := srv.headers[0]
	if h.Get("X-Api-Key") != testKey || h.Get("Anthropic-Version") == "" {
		t.Fatalf("x-api-key %q anthropic-version %q", h.Get("X-Api-Key"), h.Get("Anthropic-Version"))
	}
}

func TestStreamRequestIDFallsBackToMessageID(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(textStream("x")))
	})
	_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.RequestID != "msg_1" {
		t.Fatalf("request id %q, want the message id", resp.RequestID)
	}
}

func TestStreamToolCallsSplitInput(t *testing.T) {
	body := msgStart("msg_1", 10, 0, 0, 1) +
		textBlock(0, "Let me ", "check.") +
		toolBlock(1, "toolu_A", "read_file", `{"pa`, `th": "/tm`, `p/a.t`, `xt", "lim`, `it": 1`, `0}`) +
		toolBlock(2, "toolu_B", "list_dir", ``, `{"dir"`, `:"."}`) +
		msgDelta("tool_use", 60) + msgStop()
	srv := newServer(t, streamOK(body))
	evs, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []session.ToolCall{
		{ID: "toolu_A", Name: "read_file", Args: json.RawMessage(`{"path":"/tmp/a.txt","limit":10}`)},
		{ID: "toolu_B", Name: "list_dir", Args: json.RawMessage(`{"dir":"."}`)},
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	for i, tc := range resp.ToolCalls {
		if tc.ID != want[i].ID || tc.Name != want[i].Name || string(tc.Args) != string(want[i].Args) {
			t.Errorf("call %d = %s %s %s, want %s %s %s", i, tc.ID, tc.Name, tc.Args, want[i].ID, want[i].Name, want[i].Args)
		}
	}
	if resp.FinishReason != "tool_calls" || resp.Text != "Let me check." {
		t.Fatalf("finish %q text %q", resp.FinishReason, resp.Text)
	}
	// The deltas carry the block index and the call's name from its start;
	// the complete calls come last.
	var deltas, complete []model.Event
	for _, ev := range evs {
		switch ev.Kind {
		case model.EventToolCallDelta:
			deltas = append(deltas, ev)
		case model.EventToolCall:
			complete = append(complete, ev)
		}
	}
	if len(deltas) != 1+6+1+3 {
		t.Fatalf("%d tool call deltas, want one per block start and per input delta", len(deltas))
	}
	if d := deltas[0]; d.Index != 1 || d.Call.Name != "read_file" || d.Call.ID != "toolu_A" {
		t.Fatalf("first delta %+v %+v", d, d.Call)
	}
	if d := deltas[len(deltas)-1]; d.Index != 2 || d.Call.Name != "list_dir" || d.Delta != `:"."}` {
		t.Fatalf("last delta %+v %+v", d, d.Call)
	}
	if len(complete) != 2 || complete[0].Call.ID != "toolu_A" || complete[1].Call.ID != "toolu_B" {
		t.Fatalf("complete calls %+v", complete)
	}
	if last := evs[len(evs)-1]; last.Kind != model.EventToolCall {
		t.Fatalf("last event %v, want the complete tool calls at the end", last.Kind)
	}
}

func TestStreamToolCallWithoutInputDeltas(t *testing.T) {
	// A tool_use whose input is complete in its start (as some proxies send
	// it) and one with no input at all.
	body := msgStart("msg_1", 10, 0, 0, 1) +
		blockStart(0, map[string]any{"type": "tool_use", "id": "toolu_A", "name": "now", "input": map[string]any{"tz": "UTC"}}) + blockStop(0) +
		blockStart(1, map[string]any{"type": "tool_use", "id": "toolu_B", "name": "ping", "input": map[string]any{}}) + blockStop(1) +
		msgDelta("tool_use", 5) + msgStop()
	srv := newServer(t, streamOK(body))
	_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || string(resp.ToolCalls[0].Args) != `{"tz":"UTC"}` || string(resp.ToolCalls[1].Args) != `{}` {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
}

func TestStreamUsageFromStartAndDelta(t *testing.T) {
	body := msgStart("msg_1", 100, 50, 25, 1) + textBlock(0, "ok") +
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42,"output_tokens_details":{"thinking_tokens":7}}}`) +
		msgStop()
	srv := newServer(t, streamOK(body))
	evs, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := session.Usage{InputTokens: 175, OutputTokens: 42, CacheReadTokens: 50, CacheWriteTokens: 25, ReasoningTokens: 7}
	if resp.Usage != want {
		t.Fatalf("usage %+v, want %+v (input includes cached tokens; output from message_delta)", resp.Usage, want)
	}
	var usages []session.Usage
	for _, ev := range evs {
		if ev.Kind == model.EventUsage {
			usages = append(usages, *ev.Usage)
		}
	}
	if len(usages) != 2 || usages[0].InputTokens != 175 || usages[0].OutputTokens != 1 || usages[1] != want {
		t.Fatalf("usage events %+v", usages)
	}
	if evs[0].Kind != model.EventUsage || evs[1].Kind != model.EventText {
		t.Fatalf("events %s: the start usage should come just before the first output", kinds(evs))
	}
}

func TestStreamStopReasons(t *testing.T) {
	for stop, want := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
		"refusal": "content_filter", "tool_use": "tool_calls", "pause_turn": "pause_turn",
	} {
		t.Run(stop, func(t *testing.T) {
			srv := newServer(t, streamOK(msgStart("msg_1", 1, 0, 0, 1)+textBlock(0, "x")+msgDelta(stop, 2)+msgStop()))
			_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != want {
				t.Fatalf("finish %q, want %q", resp.FinishReason, want)
			}
		})
	}
}

func TestStreamRefusalExplanation(t *testing.T) {
	body := msgStart("msg_1", 1, 0, 0, 1) + textBlock(0, "I") +
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"type":"refusal","category":"cyber","explanation":"not this"}},"usage":{"output_tokens":3}}`) +
		msgStop()
	srv := newServer(t, streamOK(body))
	_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != "content_filter" || resp.Refusal != "not this" {
		t.Fatalf("finish %q refusal %q", resp.FinishReason, resp.Refusal)
	}
}

func TestStreamStopsWhenEmitDeclines(t *testing.T) {
	srv := newServer(t, streamOK(textStream("a", "b", "c")))
	p := newProvider(t, srv.URL)
	n := 0
	resp, err := p.Attempt(t.Context(), userRequest("hi"), func(ev model.Event) bool {
		n++
		return false
	})
	if err == nil || resp != nil || n != 1 {
		t.Fatalf("resp %v err %v after %d events; want an error after the first", resp, err, n)
	}
}
