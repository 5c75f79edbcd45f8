package model

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openrath/rath/session"
)

// A key echoed back by a provider must not reach the session: not the
// error the agent records, not the attempts in the model_call chunk, not
// the exported JSONL.
func TestKeyNeverReachesTheSession(t *testing.T) {
	const key = "sk-live-NEVER-STORE-ME-42"
	f := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 503, Message: "upstream rejected Authorization: Bearer " + key}),
		answers("fine", session.Usage{InputTokens: 1}),
	}}
	m := New(f, "m", Options{Retry: quick, Secrets: []string{key}})
	r, err := Generate(context.Background(), m, req())
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("hi").Append(
		session.Of(&session.ModelCall{Provider: r.Provider, Model: r.Model, Response: r.Output(), Usage: r.Usage, Attempts: r.Attempts}),
		session.Assistant(r.Text),
	)
	f2 := &fake{steps: [](func(context.Context, func(Event) bool) (*Response, error)){
		fails(&StatusError{Status: 401, Message: "bad key " + key}),
	}}
	_, err = Generate(context.Background(), New(f2, "m", Options{Retry: quick, Secrets: []string{key}}), req())
	s = s.Append(session.Of(&session.Failure{Code: "model", Message: err.Error()}), session.Of(&session.ModelCall{Provider: "fake", Model: "m", Attempts: AttemptsOf(err)}))
	var buf bytes.Buffer
	if err := session.Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), key) {
		t.Fatalf("the key reached the exported session:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "[redacted]") {
		t.Fatalf("expected the redacted attempt errors in the export:\n%s", buf.String())
	}
}

// echoingProvider fails its first attempt with an error quoting the key it
// was built with, as some providers do, then answers.
type echoingProvider struct {
	key string
	n   atomic.Int32
}

func (p *echoingProvider) Name() string { return "fakeecho" }

func (p *echoingProvider) Attempt(_ context.Context, _ *Request, emit func(Event) bool) (*Response, error) {
	if p.n.Add(1) == 1 {
		return nil, &StatusError{Status: 503, Message: "upstream rejected Authorization: Bearer " + p.key}
	}
	var a Assembler
	emit(a.Text("fine"))
	_, r, err := a.Finish("stop")
	return r, err
}

func init() {
	Register("fakeecho", func(_ context.Context, pc ProviderConfig) (Provider, error) {
		return &echoingProvider{key: pc.APIKey}, nil
	})
}

// A key resolved from a secret reference is scrubbed like a key given as a
// value: Open hands the resolved value to the client's Options.Secrets.
func TestResolvedKeyNeverReachesTheSession(t *testing.T) {
	const key = "sk-from-a-reference-NEVER-STORE-77"
	t.Setenv("RATH_MODEL_TEST_ECHO_KEY", key)
	cfg := &Config{Providers: map[string]ProviderConfig{"fakeecho": {APIKey: "secret://env/RATH_MODEL_TEST_ECHO_KEY"}}}
	m, err := Open(context.Background(), "fakeecho:m", OpenOptions{Config: cfg, Retry: quick, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Generate(context.Background(), m, req())
	if err != nil {
		t.Fatal(err)
	}
	s := session.FromUser("hi").Append(
		session.Of(&session.ModelCall{Provider: r.Provider, Model: r.Model, Response: r.Output(), Usage: r.Usage, Attempts: r.Attempts}),
		session.Assistant(r.Text),
	)
	var buf bytes.Buffer
	if err := session.Encode(&buf, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), key) || !strings.Contains(buf.String(), "[redacted]") {
		t.Fatalf("export:\n%s", buf.String())
	}
}
