package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openrath/rath/model"
)

func TestNewNeedsAKeyOnlyForOpenAI(t *testing.T) {
	for _, base := range []string{"", DefaultBaseURL, "https://api.openai.com/v1/", "https://API.openai.com/v1"} {
		if _, err := New(model.ProviderConfig{BaseURL: base}); !errors.Is(err, model.ErrNoAPIKey) {
			t.Errorf("base %q without a key: %v, want ErrNoAPIKey", base, err)
		}
	}
	if _, err := New(model.ProviderConfig{APIKey: testKey}); err != nil {
		t.Errorf("OpenAI with a key: %v", err)
	}
	for _, base := range []string{"localhost:11434", "ftp://example.com/v1", "http://", "::bad"} {
		if _, err := New(model.ProviderConfig{BaseURL: base}); err == nil || errors.Is(err, model.ErrNoAPIKey) {
			t.Errorf("base %q: %v, want a bad-URL error", base, err)
		}
	}
}

// A local server may go without a key, and the SDK's environment defaults
// (OPENAI_API_KEY, OPENAI_BASE_URL) do not slip in: settings come from the
// ProviderConfig alone.
func TestLocalServerWithoutKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("local"), finish("stop"), done)
	})
	p, err := New(model.ProviderConfig{BaseURL: f.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := call(t, p, userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "local" {
		t.Fatalf("text %q", resp.Text)
	}
	if got := f.requests()[0].header.Get("Authorization"); got != "" {
		t.Fatalf("sent Authorization %q to a server configured without a key", got)
	}
}

// The SDK's retries are off: one Attempt is one request, even for a 503.
func TestOneRequestPerAttempt(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	_, _, err := call(t, f.provider(t), userRequest("x"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 503 {
		t.Fatalf("got %v, want a 503", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Fatalf("one attempt made %d requests", n)
	}
}

func TestRegisteredAsOpenAI(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, text("via the registry"), finish("stop"), done)
	})
	m, err := model.Open(context.Background(), "openai:gpt-test", model.OpenOptions{
		Explicit: model.ProviderConfig{APIKey: testKey, BaseURL: f.URL + "/v1"},
		Getenv:   func(string) string { return "" },
		Config:   &model.Config{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Provider() != "openai" || m.Name() != "gpt-test" {
		t.Fatalf("opened %s:%s", m.Provider(), m.Name())
	}
	resp, err := model.Generate(context.Background(), m, userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "via the registry" || resp.Provider != "openai" {
		t.Fatalf("text %q, provider %q", resp.Text, resp.Provider)
	}
	eqJSON(t, "model", f.requests()[0].body["model"], `"gpt-test"`)

	_, err = model.Open(context.Background(), "openai:gpt-test", model.OpenOptions{
		Getenv: func(string) string { return "" },
		Config: &model.Config{},
	})
	if !errors.Is(err, model.ErrNoAPIKey) {
		t.Fatalf("opening OpenAI without a key: %v", err)
	}
}

func TestOpen(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"bad key ` + testKey + `"}}`))
	})
	m, err := Open(model.ProviderConfig{APIKey: testKey, BaseURL: f.URL}, "gpt-test", model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = model.Generate(context.Background(), m, userRequest("x"))
	if err == nil || strings.Contains(err.Error(), testKey) || m.Name() != "gpt-test" {
		t.Fatalf("got %v from %s", err, m.Name())
	}
	if _, err := Open(model.ProviderConfig{}, "gpt-test", model.Options{}); !errors.Is(err, model.ErrNoAPIKey) {
		t.Fatalf("Open without a key: %v", err)
	}
}
