package openai

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

// testKey is distinctive so that any leak of it is easy to find.
const testKey = "sk-test-Zq7vK2pW9xLm4RtY8nB3"

// hit is one request the fake server received.
type hit struct {
	at     time.Time
	path   string
	header http.Header
	body   map[string]json.RawMessage
	raw    []byte
}

// fake is a Chat Completions endpoint; handle answers attempt n (from 1).
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
}

func newFake(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, n int)) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		h := hit{at: time.Now(), path: r.URL.Path, header: r.Header.Clone(), raw: raw}
		_ = json.Unmarshal(raw, &h.body)
		f.mu.Lock()
		f.hits = append(f.hits, h)
		n := len(f.hits)
		f.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []hit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hit(nil), f.hits...)
}

// provider is a Provider for f with the test key.
func (f *fake) provider(t testing.TB) *Provider {
	t.Helper()
	p, err := New(model.ProviderConfig{APIKey: testKey, BaseURL: f.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// retrying is the provider through model.New, as the agent uses it.
func (f *fake) retrying(t testing.TB, secrets ...string) model.Model {
	return model.New(f.provider(t), "gpt-test", model.Options{
		Retry:   model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
		Secrets: secrets,
	})
}

// sse writes events as a server-sent event stream, flushing each.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

const done = "[DONE]"

// chunk is a chat.completion.chunk whose one choice has the delta given as
// raw JSON and the finish reason (null if empty).
func chunk(delta, finish string) string {
	fr := "null"
	if finish != "" {
		fr = quote(finish)
	}
	return `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test-2025",` +
		`"system_fingerprint":"fp_1","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + fr + `}]}`
}

func text(s string) string { return chunk(`{"content":`+quote(s)+`}`, "") }

func roleChunk() string { return chunk(`{"role":"assistant","content":"","refusal":null}`, "") }

func finish(reason string) string { return chunk(`{}`, reason) }

// usageChunk is the final chunk of a stream with include_usage.
func usageChunk(in, out, cached, reasoning int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test-2025","choices":[],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,`+
		`"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},`+
		`"completion_tokens_details":{"reasoning_tokens":%d,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
		in, out, in+out, cached, reasoning)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// call runs one Attempt and collects its events.
func call(t testing.TB, p *Provider, req *model.Request) ([]model.Event, *model.Response, error) {
	t.Helper()
	var evs []model.Event
	resp, err := p.Attempt(context.Background(), req, func(ev model.Event) bool {
		evs = append(evs, ev)
		return true
	})
	return evs, resp, err
}

func userRequest(s string) *model.Request {
	return &model.Request{Model: "gpt-test", Messages: []session.Message{{Role: session.RoleUser, Content: s}}}
}

// kinds lists the events' kinds, for order checks.
func kinds(evs []model.Event) []model.EventKind {
	out := make([]model.EventKind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

// joined concatenates the deltas of the events of kind k.
func joined(evs []model.Event, k model.EventKind) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == k {
			b.WriteString(ev.Delta)
		}
	}
	return b.String()
}

func count(evs []model.Event, k model.EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == k {
			n++
		}
	}
	return n
}
