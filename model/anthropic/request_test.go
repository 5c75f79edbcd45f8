package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

func TestThinkingKeptAndSentBack(t *testing.T) {
	first := msgStart("msg_1", 10, 0, 0, 1) +
		thinkingBlock(0, []string{"The user wants ", "a file."}, []string{"EqQBCkgIARAB", "GAIiQ0sig=="}) +
		blockStart(1, map[string]any{"type": "redacted_thinking", "data": "ENCRYPTED=="}) + blockStop(1) +
		toolBlock(2, "toolu_A", "read_file", `{"path":`, `"a.txt"}`) +
		msgDelta("tool_use", 30) + msgStop()
	srv := newServer(t, streamOK(first), streamOK(textStream("done")))
	p := newProvider(t, srv.URL)
	evs, resp, err := attempt(t, p, userRequest("read a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantBlocks := []session.Reasoning{
		{Text: "The user wants a file.", Signature: "EqQBCkgIARABGAIiQ0sig=="},
		{Redacted: "ENCRYPTED=="},
	}
	if !reflect.DeepEqual(resp.ReasoningBlocks, wantBlocks) {
		t.Fatalf("reasoning blocks %+v, want %+v", resp.ReasoningBlocks, wantBlocks)
	}
	if resp.Reasoning != "The user wants a file." {
		t.Fatalf("reasoning %q (streamed text must not be doubled)", resp.Reasoning)
	}
	var thoughts []string
	for _, ev := range evs {
		if ev.Kind == model.EventReasoning {
			thoughts = append(thoughts, ev.Delta)
		}
	}
	if len(thoughts) != 2 {
		t.Fatalf("reasoning events %q", thoughts)
	}

	// The next request carries the turn back: thinking (with its signature)
	// and redacted thinking before the tool_use, then the result.
	turn := resp.Turn()
	req := &model.Request{Model: "claude-test", Messages: []session.Message{
		{Role: session.RoleUser, Content: "read a.txt"},
		{Role: session.RoleAssistant, Content: turn.Text, Reasoning: turn.Reasoning, ReasoningBlocks: turn.ReasoningBlocks, ToolCalls: turn.ToolCalls},
		{Role: session.RoleTool, ToolCallID: "toolu_A", Name: "read_file", Content: "hello"},
	}}
	if _, _, err := attempt(t, p, req); err != nil {
		t.Fatal(err)
	}
	body := srv.body(t, 1)
	content := path(t, body, "messages", 1, "content").([]any)
	want := []map[string]any{
		{"type": "thinking", "thinking": "The user wants a file.", "signature": "EqQBCkgIARABGAIiQ0sig=="},
		{"type": "redacted_thinking", "data": "ENCRYPTED=="},
		{"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": map[string]any{"path": "a.txt"}},
	}
	if len(content) != len(want) {
		t.Fatalf("assistant content %s", js(content))
	}
	for i, w := range want {
		if !reflect.DeepEqual(content[i], any(w)) {
			t.Errorf("assistant block %d = %s, want %s", i, js(content[i]), js(w))
		}
	}
	if path(t, body, "messages", 1, "role") != "assistant" {
		t.Fatalf("message 1 role %v", path(t, body, "messages", 1, "role"))
	}
}

func TestUnsignedReasoningNotSent(t *testing.T) {
	_, msgs, _ := buildMessages([]session.Message{
		{Role: session.RoleUser, Content: "q"},
		{Role: session.RoleAssistant, Content: "a", Reasoning: "thought", ReasoningBlocks: []session.Reasoning{{Text: "thought"}}},
	})
	raw, _ := json.Marshal(msgs)
	var got []map[string]any
	json.Unmarshal(raw, &got)
	content := got[1]["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["type"] != "text" {
		t.Fatalf("assistant content %s: a thinking block without signature would be rejected", js(content))
	}
}

func TestSystemMessagesMerged(t *testing.T) {
	srv := newServer(t, streamOK(textStream("ok")))
	req := &model.Request{Model: "claude-test", Messages: []session.Message{
		{Role: session.RoleSystem, Content: "You are terse."},
		{Role: session.RoleSystem, Content: "Answer in French."},
		{Role: session.RoleUser, Content: "hi"},
		{Role: session.RoleSystem, Content: "Note: the repo uses Go 1.26."},
		{Role: session.RoleUser, Content: "again"},
	}}
	if _, _, err := attempt(t, newProvider(t, srv.URL), req); err != nil {
		t.Fatal(err)
	}
	body := srv.body(t, 0)
	system := body["system"].([]any)
	if len(system) != 1 || path(t, system, 0, "text") != "You are terse.\n\nAnswer in French.\n\nNote: the repo uses Go 1.26." {
		t.Fatalf("system %s", js(system))
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 1 || path(t, msgs, 0, "role") != "user" || len(path(t, msgs, 0, "content").([]any)) != 2 {
		t.Fatalf("messages %s: the user turns around the system message must merge", js(msgs))
	}
}

func TestToolResultsGroupedInOneUserTurn(t *testing.T) {
	srv := newServer(t, streamOK(textStream("ok")))
	req := &model.Request{Model: "claude-test", Messages: []session.Message{
		{Role: session.RoleUser, Content: "look"},
		{Role: session.RoleAssistant, Content: "Looking.", ToolCalls: []session.ToolCall{
			session.NewToolCall("toolu_1", "read", `{"p":"a"}`),
			session.NewToolCall("toolu_2", "read", `{"p": broken`),
			session.NewToolCall("toolu_3", "stat", ``),
		}},
		{Role: session.RoleTool, ToolCallID: "toolu_1", Name: "read", Content: "A"},
		{Role: session.RoleTool, ToolCallID: "toolu_2", Name: "read", Content: "error: bad arguments"},
		{Role: session.RoleTool, ToolCallID: "toolu_3", Name: "stat", Content: ""},
		{Role: session.RoleUser, Content: "and?"},
	}}
	if _, _, err := attempt(t, newProvider(t, srv.URL), req); err != nil {
		t.Fatal(err)
	}
	msgs := srv.body(t, 0)["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("%d turns, want user/assistant/user: %s", len(msgs), js(msgs))
	}
	roles := []any{path(t, msgs, 0, "role"), path(t, msgs, 1, "role"), path(t, msgs, 2, "role")}
	if !reflect.DeepEqual(roles, []any{"user", "assistant", "user"}) {
		t.Fatalf("roles %v", roles)
	}
	calls := path(t, msgs, 1, "content").([]any)
	if len(calls) != 4 || path(t, calls, 0, "type") != "text" {
		t.Fatalf("assistant content %s", js(calls))
	}
	inputs := []any{path(t, calls, 1, "input"), path(t, calls, 2, "input"), path(t, calls, 3, "input")}
	wantInputs := []any{map[string]any{"p": "a"}, map[string]any{}, map[string]any{}}
	if !reflect.DeepEqual(inputs, wantInputs) {
		t.Fatalf("tool_use inputs %s, want %s (malformed args become {})", js(inputs), js(wantInputs))
	}
	results := path(t, msgs, 2, "content").([]any)
	if len(results) != 4 {
		t.Fatalf("last user turn %s: want three tool_results then the text", js(results))
	}
	for i, id := range []string{"toolu_1", "toolu_2", "toolu_3"} {
		if path(t, results, i, "type") != "tool_result" || path(t, results, i, "tool_use_id") != id {
			t.Errorf("block %d = %s, want the tool_result for %s", i, js(results[i]), id)
		}
	}
	if path(t, results, 0, "content", 0, "text") != "A" || path(t, results, 3, "text") != "and?" {
		t.Fatalf("last user turn %s", js(results))
	}
}

func TestRequestParameters(t *testing.T) {
	srv := newServer(t, streamOK(textStream("ok")))
	temp, topP, parallel := 0.25, 0.9, false
	schema := `{"type":"object","properties":{"q":{"type":"string","enum":["a","b"]}},"required":["q"],"additionalProperties":false,"$defs":{"x":{"type":"integer"}}}`
	req := userRequest("hi")
	req.Tools = []model.ToolSpec{
		{Name: "search", Description: "Search the web.", Parameters: json.RawMessage(schema), Strict: true},
		{Name: "now"},
	}
	req.Params = model.Params{Temperature: &temp, TopP: &topP, MaxTokens: 777, Stop: []string{"END"},
		ToolChoice: "search", ParallelToolCalls: &parallel,
		ResponseSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	if _, _, err := attempt(t, newProvider(t, srv.URL), req); err != nil {
		t.Fatal(err)
	}
	body := srv.body(t, 0)
	if body["temperature"] != 0.25 || body["top_p"] != 0.9 || body["max_tokens"] != float64(777) || !reflect.DeepEqual(body["stop_sequences"], []any{"END"}) {
		t.Fatalf("parameters %s", js(body))
	}
	var wantSchema any
	json.Unmarshal([]byte(schema), &wantSchema)
	tool := path(t, body, "tools", 0)
	if !reflect.DeepEqual(path(t, tool, "input_schema"), wantSchema) || path(t, tool, "description") != "Search the web." ||
		path(t, tool, "name") != "search" || path(t, tool, "strict") != true {
		t.Fatalf("tool %s", js(tool))
	}
	if got := path(t, body, "tools", 1, "input_schema", "type"); got != "object" {
		t.Fatalf("a tool without parameters needs an object schema, got %s", js(path(t, body, "tools", 1)))
	}
	wantChoice := map[string]any{"type": "tool", "name": "search", "disable_parallel_tool_use": true}
	if !reflect.DeepEqual(body["tool_choice"], any(wantChoice)) {
		t.Fatalf("tool_choice %s", js(body["tool_choice"]))
	}
	wantFormat := map[string]any{"type": "json_schema", "schema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}}
	if got := path(t, body, "output_config", "format"); !reflect.DeepEqual(got, any(wantFormat)) {
		t.Fatalf("output_config.format %s", js(got))
	}
}

func TestToolChoiceMapping(t *testing.T) {
	no := false
	tools := []model.ToolSpec{{Name: "t"}}
	for _, tc := range []struct {
		choice   string
		parallel *bool
		want     string
	}{
		{"", nil, `{"type":"auto"}`},
		{"auto", nil, `{"type":"auto"}`},
		{"auto", &no, `{"disable_parallel_tool_use":true,"type":"auto"}`},
		{"", &no, `{"disable_parallel_tool_use":true,"type":"auto"}`},
		{"none", &no, `{"type":"none"}`},
		{"required", nil, `{"type":"any"}`},
		{"required", &no, `{"disable_parallel_tool_use":true,"type":"any"}`},
		{"t", nil, `{"name":"t","type":"tool"}`},
	} {
		req := userRequest("x")
		req.Tools = tools
		req.Params.ToolChoice, req.Params.ParallelToolCalls = tc.choice, tc.parallel
		p, err := buildParams(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(p.ToolChoice)
		if string(got) != tc.want {
			t.Errorf("choice %q parallel %v: %s, want %s", tc.choice, tc.parallel, got, tc.want)
		}
	}
	// Without tools there is no tool_choice to send: the API rejects one.
	req := userRequest("x")
	req.Params.ToolChoice = "required"
	p, _ := buildParams(req)
	raw, _ := json.Marshal(p)
	var m map[string]any
	json.Unmarshal(raw, &m)
	if _, ok := m["tool_choice"]; ok {
		t.Fatalf("tool_choice sent without tools: %s", raw)
	}
}

func TestBadSchemasRefused(t *testing.T) {
	req := userRequest("x")
	req.Tools = []model.ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"type":`)}}
	if _, err := buildParams(req); err == nil {
		t.Fatal("an invalid tool schema was accepted")
	}
	req = userRequest("x")
	req.Params.ResponseSchema = json.RawMessage(`{nope`)
	if _, err := buildParams(req); err == nil {
		t.Fatal("an invalid response schema was accepted")
	}
}
