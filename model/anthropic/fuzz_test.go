package anthropic

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/openrath/rath/model"
)

// FuzzStream feeds arbitrary bytes, as the body of a 200 event-stream
// response, through the SDK's SSE decoder and readStream — everything an
// Attempt does after the HTTP exchange. (Serving each input over HTTP made
// an execution ten times slower, and the fuzzer spent its time minimising.)
// It must never panic, and must either fail or return a response whose tool
// calls all have names.
func FuzzStream(f *testing.F) {
	f.Add([]byte(textStream("Hello", ", world")))
	f.Add([]byte(msgStart("m", 1, 2, 3, 4) + thinkingBlock(0, []string{"hm"}, []string{"sig"}) +
		toolBlock(1, "t1", "read", `{"a":`, `1}`) + toolBlock(2, "t2", "list") + msgDelta("tool_use", 9) + msgStop()))
	f.Add([]byte(msgStart("m", 1, 0, 0, 1) + blockStart(0, map[string]any{"type": "redacted_thinking", "data": "x"}) + msgStop()))
	f.Add([]byte(msgStart("m", 1, 0, 0, 1) + ping() + errorEvent("overloaded_error", "Overloaded")))
	f.Add([]byte(msgStart("m", 1, 0, 0, 1) + sse("content_block_start", `{"type":"content_block_start","index":0,`)))
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte(":comment\n\ndata: x\n\nevent: x\n\n"))

	req, err := http.NewRequest(http.MethodPost, "http://fuzz.invalid/v1/messages", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := &http.Response{StatusCode: 200, Request: req, Body: io.NopCloser(bytes.NewReader(data)),
			Header: http.Header{"Content-Type": {"text/event-stream"}}}
		stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
		defer stream.Close()
		resp, err := readStream(stream, "", func(model.Event) bool { return true })
		if err != nil {
			if resp != nil {
				t.Fatalf("both a response and an error (%v)", err)
			}
			return
		}
		if resp == nil {
			t.Fatal("neither a response nor an error")
		}
		for i, tc := range resp.ToolCalls {
			if tc.Name == "" {
				t.Fatalf("tool call %d has no name: %+v", i, tc)
			}
		}
		if resp.FinishReason == "" {
			t.Fatal("no finish reason")
		}
	})
}
