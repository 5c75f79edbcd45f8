package anthropic

import (
	"errors"
	"reflect"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

const wholeMessage = `{"id":"msg_9","type":"message","role":"assistant","model":"claude-test-20250101",
 "content":[
  {"type":"thinking","thinking":"Need the file.","signature":"SIG=="},
  {"type":"redacted_thinking","data":"OPAQUE"},
  {"type":"text","text":"Reading it."},
  {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.txt"}}
 ],
 "stop_reason":"tool_use","stop_sequence":null,
 "usage":{"input_tokens":20,"cache_read_input_tokens":30,"cache_creation_input_tokens":5,"output_tokens":12}}`

func TestNoStreamSameEvents(t *testing.T) {
	srv := newServer(t, jsonStatus(200, wholeMessage, "request-id", "req_whole"))
	req := userRequest("hi")
	req.NoStream = true
	evs, resp, err := attempt(t, newProvider(t, srv.URL), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.body(t, 0)["stream"]; ok {
		t.Fatal("a NoStream request asked for a stream")
	}
	if got, want := kinds(evs), "usage reasoning text tool_call_delta tool_call"; got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if resp.Text != "Reading it." || resp.Reasoning != "Need the file." || resp.FinishReason != "tool_calls" ||
		resp.RequestID != "req_whole" || resp.Model != "claude-test-20250101" {
		t.Fatalf("resp %+v", resp)
	}
	wantBlocks := []session.Reasoning{{Text: "Need the file.", Signature: "SIG=="}, {Redacted: "OPAQUE"}}
	if !reflect.DeepEqual(resp.ReasoningBlocks, wantBlocks) {
		t.Fatalf("reasoning blocks %+v", resp.ReasoningBlocks)
	}
	if len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Args) != `{"path":"a.txt"}` || resp.ToolCalls[0].ID != "toolu_1" {
		t.Fatalf("tool calls %+v", resp.ToolCalls)
	}
	if want := (session.Usage{InputTokens: 55, OutputTokens: 12, CacheReadTokens: 30, CacheWriteTokens: 5}); resp.Usage != want {
		t.Fatalf("usage %+v, want %+v", resp.Usage, want)
	}
}

func TestNoStreamMatchesStream(t *testing.T) {
	stream := msgStart("msg_9", 20, 30, 5, 1) +
		thinkingBlock(0, []string{"Need the file."}, []string{"SIG=="}) +
		blockStart(1, map[string]any{"type": "redacted_thinking", "data": "OPAQUE"}) + blockStop(1) +
		textBlock(2, "Reading it.") + toolBlock(3, "toolu_1", "read_file", `{"path":"a.txt"}`) +
		msgDelta("tool_use", 12) + msgStop()
	srv := newServer(t, streamOK(stream), jsonStatus(200, wholeMessage))
	p := newProvider(t, srv.URL)
	_, streamed, err := attempt(t, p, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	req := userRequest("hi")
	req.NoStream = true
	_, whole, err := attempt(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	streamed.RequestID, whole.RequestID = "", ""
	if !reflect.DeepEqual(streamed, whole) {
		t.Fatalf("streamed %+v\nwhole    %+v", streamed, whole)
	}
}

func TestNoStreamErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
		check  func(error) bool
	}{
		"not json":    {200, `{"id":`, func(err error) bool { return errors.Is(err, model.ErrMalformed) }},
		"not message": {200, `{}`, func(err error) bool { return errors.Is(err, model.ErrMalformed) }},
		"overloaded": {529, apiError("overloaded_error", "Overloaded"), func(err error) bool {
			var se *model.StatusError
			return errors.As(err, &se) && se.Status == 529 && se.Message == "overloaded_error: Overloaded"
		}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, jsonStatus(tc.status, tc.body))
			req := userRequest("hi")
			req.NoStream = true
			_, resp, err := attempt(t, newProvider(t, srv.URL), req)
			if resp != nil || !tc.check(err) {
				t.Fatalf("resp %v err %v", resp, err)
			}
		})
	}
}

func TestRegisteredAndOpened(t *testing.T) {
	srv := newServer(t, streamOK(textStream("via the registry")))
	m, err := model.Open(t.Context(), "anthropic:claude-test", model.OpenOptions{
		Explicit: model.ProviderConfig{APIKey: testKey, BaseURL: srv.URL},
		Getenv:   func(string) string { return "" },
		Config:   &model.Config{},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := model.Generate(t.Context(), m, userRequest("hi"))
	if err != nil || resp.Text != "via the registry" || resp.Provider != "anthropic" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	_, err = model.Open(t.Context(), "anthropic:claude-test", model.OpenOptions{
		Getenv: func(string) string { return "" }, Config: &model.Config{}})
	if !errors.Is(err, model.ErrNoAPIKey) {
		t.Fatalf("open without a key: %v", err)
	}
}
