package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// Keys out of order and an integer a float64 would round: a schema that went
// through map[string]any would not come back byte for byte.
const weatherSchema = `{"type":"object","properties":{"zone":{"type":"string"},"city":{"type":"string","maxLength":12345678901234567891}},"required":["city","zone"],"additionalProperties":false}`

func fullRequest() *model.Request {
	temp, topP, parallel := 0.2, 0.9, false
	return &model.Request{
		Model: "gpt-test",
		Messages: []session.Message{
			{Role: session.RoleSystem, Content: "Be brief."},
			{Role: session.RoleUser, Content: "Weather in Paris?"},
			{Role: session.RoleAssistant, Content: "Looking.", Reasoning: "not sent back", ToolCalls: []session.ToolCall{
				session.NewToolCall("call_1", "weather", `{"city": "Paris"}`),
				{ID: "call_2", Name: "weather", ArgsText: `{"city": "Par`},
			}},
			{Role: session.RoleTool, Content: "18C", ToolCallID: "call_1", Name: "weather"},
			{Role: session.RoleTool, Content: "error: bad arguments", ToolCallID: "call_2", Name: "weather"},
		},
		Tools: []model.ToolSpec{
			{Name: "weather", Description: "Current weather.", Parameters: json.RawMessage(weatherSchema), Strict: true},
			{Name: "noop"},
		},
		Params: model.Params{
			Temperature: &temp, TopP: &topP, MaxTokens: 256, ToolChoice: "weather",
			ParallelToolCalls: &parallel, Stop: []string{"END"},
			ResponseSchema: json.RawMessage(`{"type":"object","properties":{"b":{},"a":{}}}`),
		},
	}
}

// eqJSON compares JSON texts by value.
func eqJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func TestRequestBody(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("ok"), finish("stop"), done)
	})
	if _, _, err := call(t, f.provider(t), fullRequest()); err != nil {
		t.Fatal(err)
	}
	h := f.requests()[0]
	if h.path != "/v1/chat/completions" || h.header.Get("Authorization") != "Bearer "+testKey {
		t.Fatalf("path %q, authorization %q", h.path, h.header.Get("Authorization"))
	}
	b := h.body
	eqJSON(t, "model", b["model"], `"gpt-test"`)
	eqJSON(t, "messages", b["messages"], `[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":"Looking.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_2","type":"function","function":{"name":"weather","arguments":"{\"city\": \"Par"}}]},
		{"role":"tool","content":"18C","tool_call_id":"call_1"},
		{"role":"tool","content":"error: bad arguments","tool_call_id":"call_2"}]`)

	var tools []struct {
		Type     string                     `json:"type"`
		Function map[string]json.RawMessage `json:"function"`
	}
	if err := json.Unmarshal(b["tools"], &tools); err != nil || len(tools) != 2 {
		t.Fatalf("tools %s: %v", b["tools"], err)
	}
	if got := string(tools[0].Function["parameters"]); got != weatherSchema {
		t.Fatalf("the schema was changed on the way:\n got %s\nwant %s", got, weatherSchema)
	}
	eqJSON(t, "tools[0].strict", tools[0].Function["strict"], `true`)
	eqJSON(t, "tools[0].name", tools[0].Function["name"], `"weather"`)
	eqJSON(t, "tools[0].description", tools[0].Function["description"], `"Current weather."`)
	if tools[0].Type != "function" || tools[1].Type != "function" {
		t.Fatalf("tool types %q, %q", tools[0].Type, tools[1].Type)
	}
	for _, k := range []string{"strict", "parameters", "description"} {
		if _, ok := tools[1].Function[k]; ok {
			t.Fatalf("the bare tool has %q: %s", k, b["tools"])
		}
	}

	eqJSON(t, "tool_choice", b["tool_choice"], `{"type":"function","function":{"name":"weather"}}`)
	eqJSON(t, "parallel_tool_calls", b["parallel_tool_calls"], `false`)
	eqJSON(t, "stream", b["stream"], `true`)
	eqJSON(t, "stream_options", b["stream_options"], `{"include_usage":true}`)
	eqJSON(t, "max_completion_tokens", b["max_completion_tokens"], `256`)
	eqJSON(t, "temperature", b["temperature"], `0.2`)
	eqJSON(t, "top_p", b["top_p"], `0.9`)
	eqJSON(t, "stop", b["stop"], `["END"]`)
	eqJSON(t, "response_format", b["response_format"],
		`{"type":"json_schema","json_schema":{"name":"response","strict":true,"schema":{"type":"object","properties":{"b":{},"a":{}}}}}`)
	if _, ok := b["max_tokens"]; ok {
		t.Fatal("max_tokens sent besides max_completion_tokens")
	}
}

func TestRequestToolChoiceModes(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("ok"), finish("stop"), done)
	})
	p := f.provider(t)
	for i, choice := range []string{"auto", "none", "required", ""} {
		req := fullRequest()
		req.Params.ToolChoice = choice
		if _, _, err := call(t, p, req); err != nil {
			t.Fatal(err)
		}
		got, ok := f.requests()[i].body["tool_choice"]
		if choice == "" {
			if ok {
				t.Fatalf("no tool choice given, %s sent", got)
			}
			continue
		}
		eqJSON(t, "tool_choice "+choice, got, quote(choice))
	}

	// Without tools, OpenAI refuses tool_choice and parallel_tool_calls.
	req := fullRequest()
	req.Tools = nil
	if _, _, err := call(t, p, req); err != nil {
		t.Fatal(err)
	}
	b := f.requests()[4].body
	for _, k := range []string{"tools", "tool_choice", "parallel_tool_calls"} {
		if _, ok := b[k]; ok {
			t.Fatalf("%s sent without tools", k)
		}
	}
}

func TestRequestResponseSchemaName(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("{}"), finish("stop"), done)
	})
	req := userRequest("x")
	req.Params.ResponseSchema = json.RawMessage(`{"type":"object"}`)
	req.Params.ResponseSchemaName = "verdict"
	if _, _, err := call(t, f.provider(t), req); err != nil {
		t.Fatal(err)
	}
	eqJSON(t, "response_format", f.requests()[0].body["response_format"],
		`{"type":"json_schema","json_schema":{"name":"verdict","strict":true,"schema":{"type":"object"}}}`)
}

func TestRequestRejectedBeforeSending(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("ok"), finish("stop"), done)
	})
	bad := map[string]*model.Request{
		"unknown role":            {Model: "m", Messages: []session.Message{{Role: "narrator", Content: "x"}}},
		"invalid schema":          {Model: "m", Tools: []model.ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"type":`)}}},
		"invalid response schema": {Model: "m", Params: model.Params{ResponseSchema: json.RawMessage(`nope`)}},
	}
	for name, req := range bad {
		if _, _, err := call(t, f.provider(t), req); err == nil || model.Retryable(err) {
			t.Errorf("%s: got %v, want a permanent error", name, err)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}
