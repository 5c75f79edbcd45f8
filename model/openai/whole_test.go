package openai

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

const wholeAnswer = `{
  "id": "chatcmpl-9",
  "object": "chat.completion",
  "created": 1700000000,
  "model": "gpt-test-2025",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": "Checking both.",
      "reasoning_content": "Two lookups.",
      "refusal": null,
      "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\":\"UTC\"}"}}
      ]
    },
    "logprobs": null,
    "finish_reason": "tool_calls"
  }],
  "usage": {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340,
    "prompt_tokens_details": {"cached_tokens": 256}, "completion_tokens_details": {"reasoning_tokens": 12}}
}`

// The same answer, streamed.
var streamedAnswer = []string{
	chunk(`{"role":"assistant","content":"","reasoning_content":"Two "}`, ""),
	chunk(`{"reasoning_content":"lookups."}`, ""),
	text("Checking "), text("both."),
	chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": "}}]}`, ""),
	chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`, ""),
	chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]}`, ""),
	finish("tool_calls"),
	usageChunk(300, 40, 256, 12),
	done,
}

func TestNoStream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_whole")
		fmt.Fprint(w, wholeAnswer)
	})
	req := userRequest("x")
	req.NoStream = true
	evs, resp, err := call(t, f.provider(t), req)
	if err != nil {
		t.Fatal(err)
	}
	body := f.requests()[0].body
	if _, ok := body["stream"]; ok {
		t.Fatal("a NoStream request asked for a stream")
	}
	if _, ok := body["stream_options"]; ok {
		t.Fatal("a NoStream request sent stream_options")
	}
	want := &model.Response{
		Text:      "Checking both.",
		Reasoning: "Two lookups.",
		ToolCalls: []session.ToolCall{
			session.NewToolCall("call_a", "get_weather", `{"city":"Paris"}`),
			session.NewToolCall("call_b", "get_time", `{"tz":"UTC"}`),
		},
		FinishReason: "tool_calls",
		Usage:        session.Usage{InputTokens: 300, OutputTokens: 40, CacheReadTokens: 256, ReasoningTokens: 12},
		Model:        "gpt-test-2025",
		RequestID:    "req_whole",
	}
	if !reflect.DeepEqual(resp, want) {
		t.Fatalf("response\n got %+v\nwant %+v", resp, want)
	}
	wantKinds := []model.EventKind{model.EventReasoning, model.EventText, model.EventToolCallDelta, model.EventToolCallDelta,
		model.EventUsage, model.EventToolCall, model.EventToolCall}
	if !reflect.DeepEqual(kinds(evs), wantKinds) {
		t.Fatalf("events %v, want %v", kinds(evs), wantKinds)
	}
}

// Streamed and whole, one answer makes one Response through one Assembler.
func TestStreamAndWholeAgree(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("X-Request-Id", "req_same")
		if n == 1 {
			sse(w, streamedAnswer...)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, wholeAnswer)
	})
	p := f.provider(t)
	sevs, streamed, err := call(t, p, userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	req := userRequest("x")
	req.NoStream = true
	wevs, whole, err := call(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(streamed, whole) {
		t.Fatalf("streamed %+v\n   whole %+v", streamed, whole)
	}
	for _, k := range []model.EventKind{model.EventText, model.EventReasoning, model.EventToolCallDelta} {
		if joined(sevs, k) != joined(wevs, k) {
			t.Fatalf("%v deltas: streamed %q, whole %q", k, joined(sevs, k), joined(wevs, k))
		}
	}
}

func TestNoStreamMalformed(t *testing.T) {
	for name, body := range map[string]string{
		"no choices": `{"id":"c","object":"chat.completion","model":"m","choices":[]}`,
		"bad json":   `{"id":"c","choices":[{"index":0,"message":{"content":"x"}`,
		"no name":    `{"id":"c","choices":[{"index":0,"message":{"tool_calls":[{"id":"t","type":"function","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			})
			req := userRequest("x")
			req.NoStream = true
			_, resp, err := call(t, f.provider(t), req)
			if !errors.Is(err, model.ErrMalformed) || resp != nil {
				t.Fatalf("got %+v, %v; want ErrMalformed", resp, err)
			}
		})
	}
}
