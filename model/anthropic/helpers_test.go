package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

// testKey is distinctive so that a leak into any error string is caught.
const testKey = "sk-ant-test-9Zq4LEAKCHECKx7Wv2"

// sse renders one server-sent event as the Messages API sends it.
func sse(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// msgStart is a message_start event with the given usage.
func msgStart(id string, in, cacheRead, cacheWrite, out int) string {
	return sse("message_start", js(map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": "claude-test-20250101", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "cache_read_input_tokens": cacheRead,
			"cache_creation_input_tokens": cacheWrite, "output_tokens": out},
	}}))
}

func blockStart(i int, block map[string]any) string {
	return sse("content_block_start", js(map[string]any{"type": "content_block_start", "index": i, "content_block": block}))
}

func blockDelta(i int, delta map[string]any) string {
	return sse("content_block_delta", js(map[string]any{"type": "content_block_delta", "index": i, "delta": delta}))
}

func blockStop(i int) string {
	return sse("content_block_stop", js(map[string]any{"type": "content_block_stop", "index": i}))
}

// textBlock is a text block at index i streamed as pieces.
func textBlock(i int, pieces ...string) string {
	var b strings.Builder
	b.WriteString(blockStart(i, map[string]any{"type": "text", "text": ""}))
	for _, p := range pieces {
		b.WriteString(blockDelta(i, map[string]any{"type": "text_delta", "text": p}))
	}
	b.WriteString(blockStop(i))
	return b.String()
}

// toolBlock is a tool_use block whose input arrives as pieces.
func toolBlock(i int, id, name string, pieces ...string) string {
	var b strings.Builder
	b.WriteString(blockStart(i, map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}))
	for _, p := range pieces {
		b.WriteString(blockDelta(i, map[string]any{"type": "input_json_delta", "partial_json": p}))
	}
	b.WriteString(blockStop(i))
	return b.String()
}

// thinkingBlock is a thinking block with its text and signature in pieces.
func thinkingBlock(i int, thoughts, signature []string) string {
	var b strings.Builder
	b.WriteString(blockStart(i, map[string]any{"type": "thinking", "thinking": "", "signature": ""}))
	for _, p := range thoughts {
		b.WriteString(blockDelta(i, map[string]any{"type": "thinking_delta", "thinking": p}))
	}
	for _, p := range signature {
		b.WriteString(blockDelta(i, map[string]any{"type": "signature_delta", "signature": p}))
	}
	b.WriteString(blockStop(i))
	return b.String()
}

func msgDelta(stop string, out int) string {
	return sse("message_delta", js(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}}))
}

func msgStop() string { return sse("message_stop", `{"type":"message_stop"}`) }

func ping() string { return sse("ping", `{"type":"ping"}`) }

func errorEvent(typ, msg string) string {
	return sse("error", js(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}))
}

// textStream is a whole successful answer of text pieces.
func textStream(pieces ...string) string {
	return msgStart("msg_1", 10, 0, 0, 1) + textBlock(0, pieces...) + msgDelta("end_turn", len(pieces)) + msgStop()
}

// streamOK answers with body as an event stream.
func streamOK(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_test_1")
		io.WriteString(w, body)
	}
}

// jsonStatus answers with status and body as JSON, plus headers.
func jsonStatus(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func apiError(typ, msg string) string {
	return js(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// server plays its handlers in turn, the last one for every later
// request, and keeps what it was sent.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	handlers []http.HandlerFunc
	bodies   [][]byte
	headers  []http.Header
}

func newServer(t testing.TB, handlers ...http.HandlerFunc) *server {
	t.Helper()
	s := &server{handlers: handlers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		h := s.handlers[min(n, len(s.handlers)-1)]
		s.mu.Unlock()
		if r.URL.Path != "/v1/messages" {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// body decodes request n.
func (s *server) body(t *testing.T, n int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.bodies) {
		t.Fatalf("request %d was not made (%d made)", n, len(s.bodies))
	}
	var m map[string]any
	if err := json.Unmarshal(s.bodies[n], &m); err != nil {
		t.Fatalf("request %d is not JSON: %v\n%s", n, err, s.bodies[n])
	}
	return m
}

func newProvider(t testing.TB, url string) *Provider {
	t.Helper()
	p, err := New(model.ProviderConfig{APIKey: testKey, BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userRequest(text string) *model.Request {
	return &model.Request{Model: "claude-test", Messages: []session.Message{{Role: session.RoleUser, Content: text}}}
}

// attempt runs one Attempt and collects its events.
func attempt(t *testing.T, p *Provider, req *model.Request) ([]model.Event, *model.Response, error) {
	t.Helper()
	var evs []model.Event
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := p.Attempt(ctx, req, func(ev model.Event) bool {
		evs = append(evs, ev)
		return true
	})
	if err == nil && resp == nil {
		t.Fatal("Attempt returned neither a response nor an error")
	}
	return evs, resp, err
}

// retrying wraps p as model.New does for the retry tests.
func retrying(p model.Provider) model.Model {
	return model.New(p, "claude-test", model.Options{
		Retry:   model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
		Secrets: []string{testKey},
	})
}

func statuses(as []session.Attempt) []int {
	out := make([]int, len(as))
	for i, a := range as {
		out[i] = a.Status
	}
	return out
}

func kinds(evs []model.Event) string {
	var b strings.Builder
	for i, ev := range evs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ev.Kind.String())
	}
	return b.String()
}

// path walks decoded JSON: keys for objects, ints for arrays.
func path(t *testing.T, v any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %q: not an object: %s", k, js(v))
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at [%d]: not an array that long: %s", k, js(v))
			}
			v = a[k]
		default:
			panic(fmt.Sprintf("bad key %v", k))
		}
	}
	return v
}
