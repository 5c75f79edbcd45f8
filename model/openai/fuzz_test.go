package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/option"

	"github.com/openrath/rath/model"
)

// FuzzStream serves arbitrary bytes as the SSE body of a 200 answer. Attempt
// must not panic, and must return either an error or a Response whose tool
// calls all have names and which agrees with the events it emitted.
func FuzzStream(f *testing.F) {
	seeds := [][]string{
		{text("hello"), finish("stop"), done},
		streamedAnswer,
		{chunk(`{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{"}}]}`, ""), chunk(`{"tool_calls":[{"function":{"arguments":"}"}}]}`, ""), finish("tool_calls")},
		{chunk(`{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]}`, "tool_calls"), done},
		{chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"x"}},{"index":0,"id":"b"}]}`, ""), done},
		{chunk(`{"reasoning":"r","reasoning_content":5,"refusal":"no"}`, ""), usageChunk(1, 2, 3, 4)},
		{`{"error":{"message":"x","code":503}}`},
		{`{"choices":[{"index":1,"delta":{"content":"other choice"}}]}`, done},
		{`{"choices":`},
		{`null`, `[]`, `"s"`, done},
	}
	for _, s := range seeds {
		f.Add([]byte("data: " + strings.Join(s, "\n\ndata: ") + "\n\n"))
	}
	f.Add([]byte("event: x\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: \n\n: comment\n\ndata: [DONE]"))
	f.Add([]byte("data: {}\r\n\r\ndata: [DONE]\r\n\r\n"))

	// The body is served from memory rather than over loopback TCP: the
	// whole of Attempt runs (SDK request, response handling, SSE decoding),
	// thousands of times faster and without exhausting ephemeral ports.
	var body []byte
	p, err := New(model.ProviderConfig{APIKey: testKey, BaseURL: "http://fuzz.invalid/v1"},
		option.WithHTTPClient(&http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			_, _ = io.Copy(io.Discard, r.Body)
			return &http.Response{
				StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header:  http.Header{"Content-Type": {"text/event-stream"}},
				Body:    io.NopCloser(bytes.NewReader(body)),
				Request: r,
			}, nil
		})}))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body = data
		var evs []model.Event
		resp, err := p.Attempt(context.Background(), userRequest("x"), func(ev model.Event) bool {
			evs = append(evs, ev)
			return true
		})
		if err != nil {
			if resp != nil {
				t.Fatalf("both a response and an error: %v", err)
			}
			return
		}
		if resp == nil {
			t.Fatal("neither a response nor an error")
		}
		for _, tc := range resp.ToolCalls {
			if tc.Name == "" {
				t.Fatalf("tool call without a name: %+v", tc)
			}
		}
		if got := joined(evs, model.EventText); got != resp.Text {
			t.Fatalf("text events %q, response %q", got, resp.Text)
		}
		if got := joined(evs, model.EventReasoning); got != resp.Reasoning {
			t.Fatalf("reasoning events %q, response %q", got, resp.Reasoning)
		}
		if n := count(evs, model.EventToolCall); n != len(resp.ToolCalls) {
			t.Fatalf("%d tool call events for %d calls", n, len(resp.ToolCalls))
		}
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
