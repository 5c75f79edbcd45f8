package anthropic

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openrath/rath/model"
)

func TestRateLimitRetriedAfterRetryAfter(t *testing.T) {
	srv := newServer(t,
		jsonStatus(429, apiError("rate_limit_error", "slow down"), "Retry-After", "0.05"),
		streamOK(textStream("fine")))
	resp, err := model.Generate(t.Context(), retrying(newProvider(t, srv.URL)), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(resp.Attempts); !reflect.DeepEqual(got, []int{429, 200}) {
		t.Fatalf("attempt statuses %v, want [429 200]", got)
	}
	if resp.Text != "fine" || resp.Provider != "anthropic" || srv.requests() != 2 {
		t.Fatalf("text %q provider %q requests %d", resp.Text, resp.Provider, srv.requests())
	}
	if !strings.Contains(resp.Attempts[0].Error, "slow down") {
		t.Fatalf("first attempt error %q should carry the API's message", resp.Attempts[0].Error)
	}
}

func TestRetryAfterParsed(t *testing.T) {
	srv := newServer(t, jsonStatus(429, apiError("rate_limit_error", "slow down"), "Retry-After", "7"))
	_, _, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 429 || se.RetryAfter.Seconds() != 7 || se.Message != "rate_limit_error: slow down" {
		t.Fatalf("err %#v", err)
	}
}

func TestServerErrorRetried(t *testing.T) {
	srv := newServer(t,
		jsonStatus(500, apiError("api_error", "Internal server error")),
		streamOK(textStream("ok")))
	resp, err := model.Generate(t.Context(), retrying(newProvider(t, srv.URL)), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(resp.Attempts); !reflect.DeepEqual(got, []int{500, 200}) {
		t.Fatalf("attempt statuses %v, want [500 200]", got)
	}
}

func TestSDKDoesNotRetry(t *testing.T) {
	srv := newServer(t, jsonStatus(503, apiError("api_error", "unavailable")))
	_, _, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 503 {
		t.Fatalf("err %v", err)
	}
	if n := srv.requests(); n != 1 {
		t.Fatalf("one Attempt made %d requests: the SDK's retries must be off", n)
	}
}

func TestOverloadedEventBeforeOutputRetried(t *testing.T) {
	overloaded := msgStart("msg_1", 10, 0, 0, 1) + ping() + errorEvent("overloaded_error", "Overloaded")
	srv := newServer(t, streamOK(overloaded), streamOK(textStream("second try")))
	p := newProvider(t, srv.URL)

	evs, _, err := attempt(t, p, userRequest("hi"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 529 || !strings.Contains(se.Message, "Overloaded") {
		t.Fatalf("err %v, want a 529 StatusError carrying the message", err)
	}
	if len(evs) != 0 {
		t.Fatalf("events %s before the error: nothing was output", kinds(evs))
	}

	srv2 := newServer(t, streamOK(overloaded), streamOK(textStream("second try")))
	resp, err := model.Generate(t.Context(), retrying(newProvider(t, srv2.URL)), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(resp.Attempts); !reflect.DeepEqual(got, []int{529, 200}) || resp.Text != "second try" {
		t.Fatalf("attempt statuses %v text %q", got, resp.Text)
	}
}

func TestErrorEventAfterOutputNotRetried(t *testing.T) {
	body := msgStart("msg_1", 10, 0, 0, 1) + blockStart(0, map[string]any{"type": "text", "text": ""}) +
		blockDelta(0, map[string]any{"type": "text_delta", "text": "partial"}) + errorEvent("api_error", "boom")
	srv := newServer(t, streamOK(body), streamOK(textStream("never")))
	_, err := model.Generate(t.Context(), retrying(newProvider(t, srv.URL)), userRequest("hi"))
	if !errors.Is(err, model.ErrStreamBroken) || len(model.AttemptsOf(err)) != 1 || srv.requests() != 1 {
		t.Fatalf("err %v after %d requests, want a broken stream and no retry", err, srv.requests())
	}
}

func TestErrorEventTypes(t *testing.T) {
	for typ, status := range map[string]int{"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500,
		"invalid_request_error": 400, "authentication_error": 401, "something_new": 500} {
		srv := newServer(t, streamOK(msgStart("msg_1", 1, 0, 0, 1)+errorEvent(typ, "m")))
		_, _, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
		var se *model.StatusError
		if !errors.As(err, &se) || se.Status != status {
			t.Errorf("%s: err %v, want status %d", typ, err, status)
		}
	}
}

func TestMalformedEvents(t *testing.T) {
	for name, body := range map[string]string{
		"bad json":         msgStart("msg_1", 1, 0, 0, 1) + sse("content_block_start", `{"type":"content_block_start","index":0,`),
		"wrong shape":      msgStart("msg_1", 1, 0, 0, 1) + textBlock(0, "a") + sse("content_block_delta", `{"type":"content_block_delta","index":"zero","delta":{"type":"text_delta","text":"x"}}`),
		"no type":          msgStart("msg_1", 1, 0, 0, 1) + sse("content_block_delta", `[1,2,3]`),
		"delta first":      msgStart("msg_1", 1, 0, 0, 1) + blockDelta(0, map[string]any{"type": "text_delta", "text": "x"}),
		"before start":     textBlock(0, "x") + msgStop(),
		"skipped index":    msgStart("msg_1", 1, 0, 0, 1) + textBlock(1, "x") + msgStop(),
		"kind mismatch":    msgStart("msg_1", 1, 0, 0, 1) + toolBlock(0, "t", "n") + blockDelta(0, map[string]any{"type": "text_delta", "text": "x"}),
		"tool no name":     msgStart("msg_1", 1, 0, 0, 1) + toolBlock(0, "t", "", `{}`) + msgStop(),
		"negative usage":   msgStart("msg_1", -5, 0, 0, 1) + msgStop(),
		"two starts":       msgStart("msg_1", 1, 0, 0, 1) + msgStart("msg_2", 1, 0, 0, 1),
		"delta after stop": msgStart("msg_1", 1, 0, 0, 1) + textBlock(0, "a") + blockDelta(0, map[string]any{"type": "text_delta", "text": "x"}),
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, streamOK(body))
			_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
			if !errors.Is(err, model.ErrMalformed) || resp != nil {
				t.Fatalf("resp %v err %v, want ErrMalformed", resp, err)
			}
		})
	}
}

func TestUnknownEventsSkipped(t *testing.T) {
	body := msgStart("msg_1", 1, 0, 0, 1) + sse("future_event", `{"type":"future_event","x":1}`) +
		blockStart(0, map[string]any{"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": map[string]any{}}) + blockStop(0) +
		blockStart(1, map[string]any{"type": "text", "text": ""}) + blockDelta(1, map[string]any{"type": "text_delta", "text": "ok"}) +
		blockDelta(1, map[string]any{"type": "citations_delta", "citation": map[string]any{"type": "char_location"}}) + blockStop(1) +
		msgDelta("end_turn", 2) + msgStop()
	srv := newServer(t, streamOK(body))
	_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	if err != nil || resp.Text != "ok" || len(resp.ToolCalls) != 0 {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestStreamCut(t *testing.T) {
	partial := msgStart("msg_1", 10, 0, 0, 1) + blockStart(0, map[string]any{"type": "text", "text": ""}) +
		blockDelta(0, map[string]any{"type": "text_delta", "text": "half an ans"})
	srv := newServer(t, streamOK(partial))
	_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	if !errors.Is(err, io.ErrUnexpectedEOF) || resp != nil {
		t.Fatalf("resp %v err %v, want io.ErrUnexpectedEOF and no partial answer", resp, err)
	}
	// Through model.New: output was seen, so the call fails, not retried.
	_, err = model.Generate(t.Context(), retrying(newProvider(t, srv.URL)), userRequest("hi"))
	if !errors.Is(err, model.ErrStreamBroken) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
}

func TestStreamCutBeforeOutputRetried(t *testing.T) {
	srv := newServer(t, streamOK(msgStart("msg_1", 10, 0, 0, 1)), streamOK(textStream("whole")))
	resp, err := model.Generate(t.Context(), retrying(newProvider(t, srv.URL)), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Attempts) != 2 || resp.Text != "whole" {
		t.Fatalf("attempts %+v text %q", resp.Attempts, resp.Text)
	}
}

func TestConnectionDroppedMidStream(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, msgStart("msg_1", 10, 0, 0, 1)+blockStart(0, map[string]any{"type": "text", "text": ""}))
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // no terminating chunk
		}
	})
	_, resp, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	if err == nil || resp != nil {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if !model.Retryable(err) {
		t.Fatalf("err %v: a dropped connection should be retryable", err)
	}
}

func TestBadRequestNotRetried(t *testing.T) {
	srv := newServer(t, jsonStatus(400, apiError("invalid_request_error", "max_tokens: 999999 > 64000, the maximum")))
	_, err := model.Generate(t.Context(), retrying(newProvider(t, srv.URL)), userRequest("hi"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 400 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "max_tokens: 999999 > 64000") || !strings.Contains(se.Message, "invalid_request_error") {
		t.Fatalf("err %q should carry the API's message", err)
	}
	if srv.requests() != 1 || len(model.AttemptsOf(err)) != 1 {
		t.Fatalf("%d requests: a 400 must not be retried", srv.requests())
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		io.WriteString(w, "<html>Bad Gateway</html>")
	})
	_, _, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 502 || se.Message != "<html>Bad Gateway</html>" {
		t.Fatalf("err %#v", err)
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	echo := "invalid x-api-key: " + testKey
	cases := map[string]http.HandlerFunc{
		"401 body":    jsonStatus(401, apiError("authentication_error", echo)),
		"error event": streamOK(msgStart("msg_1", 1, 0, 0, 1) + errorEvent("overloaded_error", echo)),
		"text body": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, "upstream said "+r.Header.Get("X-Api-Key"))
		},
		"malformed event": streamOK(msgStart("msg_1", 1, 0, 0, 1) + sse("content_block_delta", `{"key":"`+testKey+`",`)),
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, h)
			_, _, err := attempt(t, newProvider(t, srv.URL), userRequest("hi"))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("Attempt's error shows the key: %v", err)
			}
			var se *model.StatusError
			if errors.As(err, &se) && strings.Contains(se.Message, testKey) {
				t.Fatalf("StatusError.Message shows the key: %q", se.Message)
			}
			_, err = model.Generate(t.Context(), retrying(newProvider(t, srv.URL)), userRequest("hi"))
			if err == nil || strings.Contains(err.Error(), testKey) {
				t.Fatalf("model.New's error shows the key (or none): %v", err)
			}
			for _, a := range model.AttemptsOf(err) {
				if strings.Contains(a.Error, testKey) {
					t.Fatalf("attempt record shows the key: %q", a.Error)
				}
			}
		})
	}
}

func TestNewNeedsKey(t *testing.T) {
	if _, err := New(model.ProviderConfig{BaseURL: "http://127.0.0.1:1"}); !errors.Is(err, model.ErrNoAPIKey) {
		t.Fatalf("err %v, want ErrNoAPIKey", err)
	}
}

func TestCanceledContext(t *testing.T) {
	srv := newServer(t, streamOK(textStream("x")))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := newProvider(t, srv.URL).Attempt(ctx, userRequest("hi"), func(model.Event) bool { return true })
	if !errors.Is(err, context.Canceled) || model.Retryable(err) {
		t.Fatalf("err %v, want context.Canceled (not retryable)", err)
	}
}
