package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

func TestStreamTextOverManyDeltas(t *testing.T) {
	var want strings.Builder
	events := []string{roleChunk()}
	for i := range 60 {
		piece := fmt.Sprintf("w%d ", i)
		want.WriteString(piece)
		events = append(events, text(piece))
	}
	events = append(events, finish("stop"), usageChunk(1200, 60, 1024, 7), done)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("X-Request-Id", "req_abc123")
		sse(w, events...)
	})

	evs, resp, err := call(t, f.provider(t), userRequest("count"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != want.String() {
		t.Fatalf("text = %q, want %q", resp.Text, want.String())
	}
	if n := count(evs, model.EventText); n != 60 {
		t.Fatalf("%d text events, want one per delta (60)", n)
	}
	if got := joined(evs, model.EventText); got != want.String() {
		t.Fatalf("text events joined = %q", got)
	}
	if resp.FinishReason != "stop" || resp.Model != "gpt-test-2025" || resp.RequestID != "req_abc123" {
		t.Fatalf("finish %q, model %q, request id %q", resp.FinishReason, resp.Model, resp.RequestID)
	}
	wantUsage := session.Usage{InputTokens: 1200, OutputTokens: 60, CacheReadTokens: 1024, ReasoningTokens: 7}
	if resp.Usage != wantUsage {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, wantUsage)
	}
	last := evs[len(evs)-1]
	if last.Kind != model.EventUsage || *last.Usage != wantUsage {
		t.Fatalf("last event = %+v, want the usage", last)
	}
	for _, ev := range evs {
		if ev.Kind == model.EventDone {
			t.Fatal("the provider emitted EventDone; model.New does that")
		}
	}
}

func TestStreamRequestIDFallsBackToCompletionID(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("hi"), finish("stop"), done)
	})
	_, resp, err := call(t, f.provider(t), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.RequestID != "chatcmpl-7" {
		t.Fatalf("request id = %q, want the completion id", resp.RequestID)
	}
}

// Two parallel calls whose argument pieces interleave, keyed by index, one
// chunk carrying deltas of both.
func TestStreamParallelToolCallsInterleaved(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w,
			roleChunk(),
			chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Par"}},{"index":1,"function":{"arguments":":\"UTC"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"is\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\"}"}}]}`, ""),
			finish("tool_calls"),
			done)
	})
	evs, resp, err := call(t, f.provider(t), userRequest("weather and time"))
	if err != nil {
		t.Fatal(err)
	}
	want := []session.ToolCall{
		session.NewToolCall("call_a", "get_weather", `{"city":"Paris"}`),
		session.NewToolCall("call_b", "get_time", `{"tz":"UTC"}`),
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Fatalf("tool calls = %+v, want %+v", resp.ToolCalls, want)
	}
	if resp.FinishReason != "tool_calls" {
		t.Fatalf("finish = %q", resp.FinishReason)
	}
	if n := count(evs, model.EventToolCallDelta); n != 8 {
		t.Fatalf("%d tool-call delta events, want 8", n)
	}
	var done []model.Event
	for _, ev := range evs {
		if ev.Kind == model.EventToolCall {
			done = append(done, ev)
		}
	}
	if len(done) != 2 || done[0].Index != 0 || done[1].Index != 1 || done[1].Call.Name != "get_time" {
		t.Fatalf("tool call events = %+v", done)
	}
	if evs[len(evs)-1].Kind != model.EventToolCall {
		t.Fatal("complete tool calls should be the last events")
	}
}

// Deltas without an index (some compatible servers) continue the latest call
// until a new id starts the next; taking the missing index as 0 would merge
// the two calls and fail on the id change.
func TestStreamIndexlessToolCalls(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w,
			chunk(`{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"function":{"arguments":"{\"path\":"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":null,"function":{"arguments":"\"a.go\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"id":"call_2","type":"function","function":{"name":"list","arguments":"{}"}}]}`, ""),
			finish("tool_calls"),
			done)
	})
	_, resp, err := call(t, f.provider(t), userRequest("read"))
	if err != nil {
		t.Fatal(err)
	}
	want := []session.ToolCall{
		session.NewToolCall("call_1", "read", `{"path":"a.go"}`),
		session.NewToolCall("call_2", "list", `{}`),
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Fatalf("tool calls = %+v, want %+v", resp.ToolCalls, want)
	}
}

func TestStreamReasoningFromCompatibleServers(t *testing.T) {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		t.Run(key, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				sse(w,
					chunk(`{"role":"assistant","`+key+`":"Let me "}`, ""),
					chunk(`{"`+key+`":"think."}`, ""),
					// Servers that send both keys send the same text twice.
					chunk(`{"reasoning_content":" Done.","reasoning":" Done."}`, ""),
					chunk(`{"content":"42","`+key+`":null}`, ""),
					finish("stop"),
					done)
			})
			evs, resp, err := call(t, f.provider(t), userRequest("answer"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Reasoning != "Let me think. Done." || resp.Text != "42" {
				t.Fatalf("reasoning %q, text %q", resp.Reasoning, resp.Text)
			}
			want := []model.EventKind{model.EventReasoning, model.EventReasoning, model.EventReasoning, model.EventText}
			if !reflect.DeepEqual(kinds(evs), want) {
				t.Fatalf("events %v, want %v", kinds(evs), want)
			}
		})
	}
}

func TestStreamRefusal(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, chunk(`{"refusal":"I can't "}`, ""), chunk(`{"refusal":"help with that."}`, ""), finish("stop"), done)
	})
	_, resp, err := call(t, f.provider(t), userRequest("bad"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Refusal != "I can't help with that." || resp.Text != "" {
		t.Fatalf("refusal %q, text %q", resp.Refusal, resp.Text)
	}
}

// The finish_reason makes a stream complete even when the server closes it
// without [DONE]; [DONE] without a finish_reason does too.
func TestStreamEndsByFinishReasonOrDone(t *testing.T) {
	for name, events := range map[string][]string{
		"finish without DONE": {text("a"), text("b"), finish("length")},
		"DONE without finish": {text("a"), text("b"), done},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(w, events...) })
			_, resp, err := call(t, f.provider(t), userRequest("x"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "ab" {
				t.Fatalf("text = %q", resp.Text)
			}
		})
	}
}

func TestStreamCutMidway(t *testing.T) {
	for name, cut := range map[string]func(w http.ResponseWriter){
		"closed cleanly": func(w http.ResponseWriter) {},
		"connection dropped": func(w http.ResponseWriter) {
			panic(http.ErrAbortHandler) // the server drops the connection
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				sse(w, roleChunk(), text("The answer is"), text(" forty"))
				cut(w)
			})
			evs, resp, err := call(t, f.provider(t), userRequest("x"))
			if !errors.Is(err, io.ErrUnexpectedEOF) || resp != nil {
				t.Fatalf("got %v, %+v; want an io.ErrUnexpectedEOF error", err, resp)
			}
			if joined(evs, model.EventText) != "The answer is forty" {
				t.Fatalf("events before the cut: %+v", evs)
			}

			// Through model.New: output was yielded, so no retry.
			_, err = model.Generate(context.Background(), f.retrying(t), userRequest("x"))
			if !errors.Is(err, model.ErrStreamBroken) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Generate: %v, want a broken stream", err)
			}
			if n := len(model.AttemptsOf(err)); n != 1 {
				t.Fatalf("%d attempts, want 1", n)
			}
			if len(f.requests()) != 2 {
				t.Fatalf("%d requests, want 2 (one per call)", len(f.requests()))
			}
		})
	}
}

func TestStreamMalformedEvent(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("partial"), `{"id":"chatcmpl-7","choices":[{"index":0,"delta":{"content":"x"`, finish("stop"), done)
	})
	_, _, err := call(t, f.provider(t), userRequest("x"))
	if !errors.Is(err, model.ErrMalformed) {
		t.Fatalf("Attempt: %v, want ErrMalformed", err)
	}

	m := f.retrying(t)
	var texts int
	var last error
	for ev, err := range m.Stream(context.Background(), userRequest("x")) {
		if err != nil {
			last = err
			continue
		}
		if ev.Kind == model.EventText {
			texts++
		}
	}
	if !errors.Is(last, model.ErrMalformed) || !errors.Is(last, model.ErrStreamBroken) {
		t.Fatalf("Stream: %v, want a malformed, broken stream", last)
	}
	if texts != 1 || len(model.AttemptsOf(last)) != 1 || len(f.requests()) != 2 {
		t.Fatalf("%d text events, %d attempts, %d requests; want 1, 1, 2 (not retried)", texts, len(model.AttemptsOf(last)), len(f.requests()))
	}
}

func TestStreamStopsWhenConsumerStops(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("a"), text("b"), text("c"), text("d"), finish("stop"), done)
	})
	var seen int
	resp, err := f.provider(t).Attempt(context.Background(), userRequest("x"), func(ev model.Event) bool {
		seen++
		return seen < 2
	})
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want a cancellation", resp, err)
	}
	if seen != 2 {
		t.Fatalf("emit called %d times after returning false", seen-2)
	}
}

// An error event inside a 200 stream is an error; one carrying an HTTP
// status is a StatusError, retried like the status it names.
func TestStreamErrorEvent(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch n {
		case 1:
			sse(w, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`)
		case 2:
			sse(w, `{"error":{"message":"Rate limited upstream","code":429}}`)
		default:
			sse(w, text("ok"), finish("stop"), done)
		}
	})
	p := f.provider(t)
	_, _, err := call(t, p, userRequest("x"))
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Message != "The server had an error while processing your request." {
		t.Fatalf("first: %v, want a ProviderError with the message", err)
	}

	// Through model.New the in-stream 429, before any output, is retried.
	resp, err := model.Generate(context.Background(), f.retrying(t), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(resp.Attempts); len(got) != 2 || got[0] != 429 || got[1] != 200 || resp.Text != "ok" {
		t.Fatalf("attempts %v, text %q; want [429 200], ok", got, resp.Text)
	}
	if !strings.Contains(resp.Attempts[0].Error, "Rate limited upstream") {
		t.Fatalf("first attempt's error = %q", resp.Attempts[0].Error)
	}
}

// A server that ignores "stream" and answers with JSON is still understood.
func TestStreamAnsweredWhole(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}`)
	})
	evs, resp, err := call(t, f.provider(t), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "whole" || joined(evs, model.EventText) != "whole" {
		t.Fatalf("text %q, events %+v", resp.Text, evs)
	}
}

// Cancelling the context ends an attempt whose server has gone quiet.
func TestStreamCancelled(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("first"))
		<-r.Context().Done() // then nothing, until the client goes away
	})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := f.provider(t).Attempt(ctx, userRequest("x"), func(ev model.Event) bool {
		cancel()
		return true
	})
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want the cancellation", resp, err)
	}
}
